#!/usr/bin/env bash
# The Helm chart on a real node: etcd, kube-apiserver, kube-scheduler and a
# kubelet (built from the Go module proxy, as hack/kube-assets.sh builds
# kube-apiserver) on Debian's containerd and CNI plugins, with BIND on the
# host. `helm install` with nothing made by hand but the provider's TSIG
# Secret, in both modes; a LoadBalancer Service must become its record in
# BIND, and in distributed mode with dnsProviders.enabled a team's
# DNSProvider (its own zone and TSIG key, in a Secret of its namespace) its
# Service's record; then an upgrade (changed values, generated NATS
# passwords kept, a new streams Job) and an uninstall.
#
# kube-controller-manager cannot be built here (k8s.io/endpointslice
# v0.32.13 is refused by the module proxy: 403), so hack/helm-node/
# controllers.py stands in for it (a pod per Deployment/StatefulSet/Job,
# the default ServiceAccount) and for kube-proxy and cluster DNS (iptables
# DNAT of ClusterIPs, hostAliases). Everything else is the real thing.
#
#   hack/helm-node.sh        (root; ~2 min with the binaries cached, ~10 the first time)
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh
ROOT=$PWD
CACHE=${ZS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zonestream}
KUBE_VERSION=${KUBE_VERSION:-1.32.13}
BIN="$CACHE/kube-assets/$KUBE_VERSION"
W=$(mktemp -d /tmp/zs-helm-node.XXXXXX)
log() { echo "helm-node: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

source hack/containers/engine.sh
KUBEBUILDER_ASSETS=$(hack/kube-assets.sh | tail -n 1)
TOOLS=$(hack/tools.sh | tail -n 1)
HELM="$TOOLS/helm"
PIDS=()
cleanup() {
  set +e
  # The pods' containers outlive kubelet and containerd: stop them first.
  if [ -S "$W/ctd/containerd.sock" ]; then
    local ctr="ctr -a $W/ctd/containerd.sock -n k8s.io" t
    for t in $($ctr tasks ls -q 2>/dev/null); do $ctr tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
    sleep 1
    for t in $($ctr tasks ls -q 2>/dev/null); do $ctr tasks delete -f "$t" >/dev/null 2>&1; done
  fi
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill "${PIDS[i]}" 2>/dev/null; done
  sleep 1
  iptables -t nat -D PREROUTING -j ZS-SVC 2>/dev/null
  iptables -t nat -D OUTPUT -j ZS-SVC 2>/dev/null
  iptables -t nat -F ZS-SVC 2>/dev/null; iptables -t nat -X ZS-SVC 2>/dev/null
  iptables -t nat -D PREROUTING -d "$SVC_IP/32" -p tcp --dport 443 -j DNAT --to-destination "$HOST_IP:36443" 2>/dev/null
  iptables -t nat -D POSTROUTING -s 10.244.0.0/24 -d 10.244.0.0/24 -j MASQUERADE 2>/dev/null
  iptables -D FORWARD -s 10.244.0.0/24 -j ACCEPT 2>/dev/null; iptables -D FORWARD -d 10.244.0.0/24 -j ACCEPT 2>/dev/null
  ip link del zscni0 2>/dev/null
  awk -v w="$W/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount 2>/dev/null
  stop_engine
  rm -rf "$W"
}
trap cleanup EXIT
bg() { local name=$1; shift; "$@" >"$W/$name.log" 2>&1 & PIDS+=($!); }

# kubelet and kube-scheduler, as hack/kube-assets.sh builds kube-apiserver.
build_kube() {
  local cmd=$1
  [ -x "$BIN/$cmd" ] && return
  log "building $cmd v$KUBE_VERSION (first time only)"
  local work minor="0.${KUBE_VERSION#1.}" ldflags="" kminor
  work=$(mktemp -d)
  (
    cd "$work"
    go mod init zonestream.local/$cmd-build >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
    local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$gomod" | awk '{print $1}' | while read -r m; do
      go mod edit -replace="$m=$m@v$minor"
    done
    go get "k8s.io/kubernetes/cmd/$cmd@v$KUBE_VERSION" >/dev/null
    kminor=$(echo "$KUBE_VERSION" | cut -d. -f2)
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $p.gitVersion=v$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$kminor"
    done
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w $ldflags" -o "$BIN/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv "$BIN/$cmd.tmp" "$BIN/$cmd"
  )
  rm -rf "$work"
}
build_kube kubelet
build_kube kube-scheduler

need=()
for c in containerd:containerd /usr/lib/cni/bridge:containernetworking-plugins /bin/busybox:busybox-static named:bind9 dig:bind9-dnsutils jq:jq python3:python3; do
  command -v "${c%%:*}" >/dev/null 2>&1 || [ -e "${c%%:*}" ] || need+=("${c#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
install_packages
start_engine
# start_engine traps EXIT with stop_engine alone; cleanup stops the engine too,
# after the node's processes, mounts and rules.
trap cleanup EXIT

HOST_IP=$(hostname -I | awk '{print $1}')
SVC_IP=10.97.0.1
export KUBECONFIG=$W/kubeconfig
K=kubectl

# --- images: the sandbox, zonestream (lean: rfc2136 is all this test needs), NATS ---
log "images"
mkdir -p "$W/img/pause" "$W/img/zs/tmp" "$W/img/nats/data"
CGO_ENABLED=0 go build -o "$W/img/pause/pause" hack/helm-node/pause.go
printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >"$W/img/pause/Dockerfile"
$DOCKER build -q -t registry.k8s.io/pause:3.10 "$W/img/pause" >/dev/null
(cd cmd/zonestream && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$W/img/zs/zonestream" .)
cp /etc/ssl/certs/ca-certificates.crt "$W/img/zs/"; chmod 1777 "$W/img/zs/tmp"
$DOCKER build -q -t zonestream:latest -f hack/containers/zonestream.Dockerfile "$W/img/zs" >/dev/null
cp "$TOOLS/nats-server" /bin/busybox "$W/img/nats/" && mv "$W/img/nats/busybox" "$W/img/nats/busybox.tmp" && mv "$W/img/nats/busybox.tmp" "$W/img/nats/busybox"
$DOCKER build -q -t nats:2.15-alpine -f hack/containers/nats.Dockerfile "$W/img/nats" >/dev/null

# --- control plane ---
log "etcd, kube-apiserver"
mkdir -p "$W/k8s"
openssl genrsa -out "$W/k8s/sa.key" 2048 2>/dev/null
printf 'zs-admin-token,admin,1,system:masters\nzs-node-token,system:node:zsnode,2,system:nodes\n' >"$W/k8s/tokens.csv"
bg etcd "$KUBEBUILDER_ASSETS/etcd" --data-dir "$W/etcd" --listen-client-urls http://127.0.0.1:32379 \
  --advertise-client-urls http://127.0.0.1:32379 --listen-peer-urls http://127.0.0.1:32380
bg apiserver "$KUBEBUILDER_ASSETS/kube-apiserver" --etcd-servers=http://127.0.0.1:32379 --secure-port=36443 \
  --bind-address=0.0.0.0 --advertise-address="$HOST_IP" --cert-dir="$W/k8s/certs" \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$W/k8s/sa.key" \
  --service-account-signing-key-file="$W/k8s/sa.key" --token-auth-file="$W/k8s/tokens.csv" \
  --authorization-mode=AlwaysAllow --service-cluster-ip-range=10.97.0.0/16
for token in admin node; do
  cat >"$W/$token.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: zs, cluster: {server: "https://127.0.0.1:36443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: zs-$token-token}}]
contexts: [{name: zs, context: {cluster: zs, user: u}}]
current-context: zs
EOT
done
cp "$W/admin.kubeconfig" "$KUBECONFIG"
for i in $(seq 1 60); do $K get ns default >/dev/null 2>&1 && break; sleep 1; done
$K get ns default >/dev/null || { tail "$W/apiserver.log"; fail "kube-apiserver did not come up"; }
# kube-proxy's part for the API: pods reach kubernetes.default's ClusterIP.
iptables -t nat -A PREROUTING -d "$SVC_IP/32" -p tcp --dport 443 -j DNAT --to-destination "$HOST_IP:36443"
bg scheduler "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --leader-elect=false --secure-port=30259

# --- the node: containerd, CNI, kubelet ---
log "containerd, kubelet"
mkdir -p "$W/ctd" "$W/cni" "$W/kubelet/manifests"
cat >"$W/ctd/config.toml" <<EOT
version = 2
root = "$W/ctd/root"
state = "$W/ctd/state"
[grpc]
  address = "$W/ctd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  # This machine may not lower oom_score_adj: without this, runc fails
  # every sandbox ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$W/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
EOT
cat >"$W/cni/10-zs.conflist" <<'EOT'
{"cniVersion": "1.0.0", "name": "zs", "plugins": [
 {"type": "bridge", "bridge": "zscni0", "isGateway": true, "ipMasq": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
 {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOT
bg containerd containerd --config "$W/ctd/config.toml"
for i in $(seq 1 30); do [ -S "$W/ctd/containerd.sock" ] && break; sleep 0.5; done
for img in registry.k8s.io/pause:3.10 zonestream:latest nats:2.15-alpine; do
  $DOCKER save "$img" | ctr -a "$W/ctd/containerd.sock" -n k8s.io images import - >/dev/null
done
cat >"$W/kubelet/config.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failSwapOn: false
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
port: 30250
readOnlyPort: 0
healthzPort: 30248
staticPodPath: $W/kubelet/manifests
containerRuntimeEndpoint: unix://$W/ctd/containerd.sock
enforceNodeAllocatable: []
localStorageCapacityIsolation: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOT
bg kubelet "$BIN/kubelet" --config="$W/kubelet/config.yaml" --kubeconfig="$W/node.kubeconfig" \
  --hostname-override=zsnode --root-dir="$W/kubelet/root" --cert-dir="$W/kubelet/pki"
for i in $(seq 1 60); do
  [ "$($K get node zsnode -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && break
  sleep 1
done
[ "$i" -lt 60 ] || { tail -20 "$W/kubelet.log"; fail "the node is not Ready"; }
# The node lifecycle controller would lift this taint.
$K taint nodes zsnode node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
log "node zsnode Ready ($(grep -c '^E' "$W/kubelet.log" || true) error lines in kubelet's log, see $W/kubelet.log)"

# --- BIND on the host's address, where pods reach it ---
mkdir -p "$W/bind"
SECRET=$(head -c 32 /dev/urandom | base64)
TEAM_SECRET=$(head -c 32 /dev/urandom | base64) # team-a's own key, for its own zone
cat >"$W/bind/named.conf" <<EOT
options { directory "$W/bind"; pid-file "$W/bind/named.pid"; listen-on port 5353 { $HOST_IP; }; listen-on-v6 { none; };
  recursion no; dnssec-validation no; session-keyfile "$W/bind/session.key"; };
key "zonestream-key" { algorithm hmac-sha256; secret "$SECRET"; };
zone "example.org" { type primary; file "$W/bind/example.org.db"; allow-update { key "zonestream-key"; }; allow-transfer { key "zonestream-key"; }; };
key "team-key" { algorithm hmac-sha256; secret "$TEAM_SECRET"; };
zone "team.example.net" { type primary; file "$W/bind/team.example.net.db"; allow-update { key "team-key"; }; allow-transfer { key "team-key"; }; };
EOT
printf '$TTL 60\n@ IN SOA ns.example.org. admin.example.org. 1 60 60 600 60\n@ IN NS ns.example.org.\nns IN A %s\n' "$HOST_IP" >"$W/bind/example.org.db"
printf '$TTL 60\n@ IN SOA ns.example.org. admin.example.org. 1 60 60 600 60\n@ IN NS ns.example.org.\n' >"$W/bind/team.example.net.db"
bg named named -g -u root -c "$W/bind/named.conf"
for i in $(seq 1 30); do dig +short @"$HOST_IP" -p 5353 SOA example.org | grep -q ns && break; sleep 0.5; done

values() { # the provider's values: BIND on the host, its TSIG key from a Secret
  cat <<EOT
provider:
  name: rfc2136
  args: {rfc2136: {rfc2136-host: "$HOST_IP", rfc2136-port: 5353, rfc2136-zone: example.org,
    rfc2136-tsig-keyname: zonestream-key, rfc2136-tsig-secret-alg: hmac-sha256, rfc2136-tsig-axfr: true}}
  secrets: {rfc2136: {rfc2136-tsig-secret: {name: tsig, key: secret}}}
sources: [service]
domainFilters: [example.org]
policy: sync
# No volume provisioner (a controller-manager's part): an emptyDir.
persistence: {enabled: false}
EOT
}
namespace() {
  $K create namespace "$1" >/dev/null
  # The controller-manager's root-CA publisher's part.
  $K -n "$1" create configmap kube-root-ca.crt --from-file=ca.crt="$W/k8s/certs/apiserver.crt" >/dev/null
  printf '%s' "$SECRET" >"$W/tsig"
  $K -n "$1" create secret generic tsig --from-file=secret="$W/tsig" >/dev/null
}
# settle NS: run the stand-in controllers until every pod is ready or done.
settle() {
  local ns=$1 i
  for i in $(seq 1 60); do
    python3 hack/helm-node/controllers.py "$ns" >/dev/null
    if [ -n "$($K -n "$ns" get pods -o name)" ] && ! $K -n "$ns" get pods --no-headers | grep -vE ' (1/1 +Running|0/1 +Completed) ' | grep -q .; then
      return 0
    fi
    sleep 3
  done
  $K -n "$ns" get pods
  fail "the pods of $ns did not become ready"
}
# record NS NAME IP [DOMAIN]: a LoadBalancer Service named NAME becomes
# NAME.DOMAIN (default example.org) A IP.
record() {
  local ns=$1 name=$2 ip=$3 domain=${4:-example.org} i a
  cat <<EOT | $K apply -f - >/dev/null
apiVersion: v1
kind: Service
metadata: {name: $name, namespace: $ns, annotations: {external-dns.alpha.kubernetes.io/hostname: $name.$domain}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
EOT
  $K -n "$ns" patch service "$name" --subresource=status -p "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"$ip\"}]}}}" >/dev/null
  for i in $(seq 1 60); do
    a=$(dig +short @"$HOST_IP" -p 5353 "$name.$domain" A)
    [ "$a" = "$ip" ] && { log "$name.$domain -> $a in BIND after ${i}s"; return 0; }
    sleep 1
  done
  fail "$name.$domain did not become $ip in BIND"
}
# team_provider: team-a declares its own DNSProvider, on its own zone and
# key of the host's BIND, with the key in a Secret of its namespace.
team_provider() {
  local i ready
  $K create namespace team-a >/dev/null
  printf '%s' "$TEAM_SECRET" >"$W/team-tsig"
  $K -n team-a create secret generic dns --from-file=rfc2136-tsig-secret="$W/team-tsig" >/dev/null
  cat <<EOT | $K apply -f - >/dev/null
apiVersion: zonestream.io/v1alpha1
kind: DNSProvider
metadata: {name: dns, namespace: team-a}
spec:
  provider: rfc2136
  settings: {rfc2136-host: "$HOST_IP", rfc2136-port: "5353", rfc2136-zone: team.example.net,
    rfc2136-tsig-keyname: team-key, rfc2136-tsig-secret-alg: hmac-sha256, rfc2136-tsig-axfr: "true"}
  credentials: {secretRef: {name: dns}}
EOT
  for i in $(seq 1 60); do
    ready=$($K -n team-a get dnsprovider dns -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
    [ "$ready" = True ] && { log "DNSProvider team-a/dns Ready after ${i}s"; return 0; }
    sleep 1
  done
  $K -n team-a get dnsprovider dns -o yaml
  fail "DNSProvider team-a/dns did not become Ready"
}

# --- the all-in-one (the default mode) ---
log "helm install (allinone)"
namespace zs-aio
values >"$W/aio.yaml"
$HELM install zonestream deploy/helm/zonestream -n zs-aio -f "$W/aio.yaml" >/dev/null
settle zs-aio
record zs-aio web 203.0.113.10
$HELM uninstall zonestream -n zs-aio >/dev/null
python3 hack/helm-node/controllers.py zs-aio >/dev/null
left=$($K -n zs-aio get deploy,svc,sa,secret,cm,role,rolebinding -l app.kubernetes.io/instance=zonestream -o name)
[ -z "$left" ] || fail "uninstall left $left"
log "allinone: installed, record made, uninstalled"

# --- distributed on the bundled NATS, users and streams by the chart ---
log "helm install (distributed)"
namespace zs-dist
{ values; printf 'mode: distributed\nclusterName: node\ntxtOwnerId: dist\n'
  for s in collector dedup planner applier portal; do printf '%s: {replicas: 1}\n' "$s"; done
  printf 'dnsProviders: {enabled: true}\n'; } >"$W/dist.yaml"
$HELM install zs deploy/helm/zonestream -n zs-dist -f "$W/dist.yaml" >/dev/null
settle zs-dist
record zs-dist web2 203.0.113.20
# A team's own provider, declared after the install, on the same release:
# its Service's name lands in its zone, with its key.
team_provider
record team-a app 203.0.113.50 team.example.net
passwords() { $K -n zs-dist get secret zs-zonestream-nats-users -o json | jq -S .data; }
before=$(passwords)
$HELM upgrade zs deploy/helm/zonestream -n zs-dist -f "$W/dist.yaml" --set logLevel=debug,policy=upsert-only >/dev/null
[ "$(passwords)" = "$before" ] || fail "the upgrade changed the generated NATS passwords"
settle zs-dist
$K -n zs-dist get pods --no-headers | grep -q 'zs-zonestream-streams-2-.* Completed' || fail "no streams Job for revision 2"
$K -n zs-dist get deploy zs-zonestream-planner -o jsonpath='{.spec.template.spec.containers[0].args}' | grep -q -- '--policy=upsert-only' ||
  fail "the upgrade did not change the planner's arguments"
record zs-dist web3 203.0.113.30
$HELM uninstall zs -n zs-dist >/dev/null
python3 hack/helm-node/controllers.py zs-dist >/dev/null
left=$($K -n zs-dist get deploy,sts,job,svc,secret,networkpolicy,pdb -l app.kubernetes.io/instance=zs -o name)
[ -z "$left" ] || fail "uninstall left $left"
log "distributed: installed, record made, a team's DNSProvider's record made, upgraded (passwords kept, streams Job 2 done), uninstalled"
log "PASS"
