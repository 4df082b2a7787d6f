#!/usr/bin/env bash
# Builds kube-apiserver (and etcd) from the Go module proxy into a cache
# directory, the way envtest expects them (KUBEBUILDER_ASSETS). Prebuilt
# downloads are not reachable from our CI machines, modules are.
#
#   hack/kube-assets.sh            -> prints the assets directory
#   KUBE_VERSION=1.32.13 ZS_CACHE=~/.cache/zonestream hack/kube-assets.sh
set -euo pipefail
# Built outside the workspace, with the machine's own Go (go.work's
# toolchain, hack/go-env.sh, is for zonestream's modules).
export GOTOOLCHAIN=local

KUBE_VERSION=${KUBE_VERSION:-1.32.13}
ETCD_VERSION=${ETCD_VERSION:-3.5.21}
CACHE=${ZS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zonestream}
ASSETS="$CACHE/kube-assets/$KUBE_VERSION"
mkdir -p "$ASSETS"

log() { echo "kube-assets: $*" >&2; }

build_apiserver() {
  local work; work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  local minor="0.${KUBE_VERSION#1.}"
  log "building kube-apiserver v$KUBE_VERSION (first time only, ~5 min)"
  (
    cd "$work"
    go mod init zonestream.local/kube-apiserver-build >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
    # k8s.io/kubernetes replaces its staging modules with local paths; a
    # consumer must pin each of them to the matching published v0.X.Y.
    local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$gomod" | awk '{print $1}' | while read -r m; do
      go mod edit -replace="$m=$m@v$minor"
    done
    # go get, not go mod tidy: tidy also resolves the tests of every
    # dependency, and some of their module versions are not served.
    go get "k8s.io/kubernetes/cmd/kube-apiserver@v$KUBE_VERSION" >/dev/null
    # Without these, the server reports v0.0.0 and kubectl refuses it.
    local ldflags="" kminor; kminor=$(echo "$KUBE_VERSION" | cut -d. -f2)
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $p.gitVersion=v$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$kminor"
      ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w $ldflags" -o "$ASSETS/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    mv "$ASSETS/kube-apiserver.tmp" "$ASSETS/kube-apiserver"
  )
}

build_etcd() {
  local work; work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  log "building etcd v$ETCD_VERSION"
  (
    cd "$work"
    go mod init zonestream.local/etcd-build >/dev/null 2>&1
    go mod edit -require="go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >/dev/null
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$ASSETS/etcd.tmp" go.etcd.io/etcd/server/v3
    mv "$ASSETS/etcd.tmp" "$ASSETS/etcd"
  )
}

[ -x "$ASSETS/kube-apiserver" ] || build_apiserver
if [ ! -x "$ASSETS/etcd" ]; then
  if command -v etcd >/dev/null 2>&1; then ln -sf "$(command -v etcd)" "$ASSETS/etcd"; else build_etcd; fi
fi
"$ASSETS/kube-apiserver" --version >&2
echo "$ASSETS"
