#!/usr/bin/env bash
# Brings docker-compose.yml up with its local kube-apiserver
# (deploy/compose/local-kube.yml), as README's "docker compose" section
# tells users, creates a Service and waits until the compose BIND answers
# its record; prints how long that took from `up`, then tears it all down.
# Uses `docker compose` when there, else Debian's docker-compose (v1).
set -euo pipefail
cd "$(dirname "$0")/../.."
DOCKER=${DOCKER:-docker}
compose=(docker-compose)
docker compose version >/dev/null 2>&1 && compose=(docker compose)
echo "compose: $("${compose[@]}" version | head -n 1)" >&2
compose+=(-p zonestream-check -f docker-compose.yml -f deploy/compose/local-kube.yml)
export KUBECONFIG=$PWD/.local-kube/kubeconfig
# The portal on a port nothing listens on: 8080 may be taken here.
for ZS_PORTAL_PORT in $(shuf -i 20000-40000 -n 20); do
  (exec 3<>"/dev/tcp/127.0.0.1/$ZS_PORTAL_PORT") 2>/dev/null || break
done
export ZS_PORTAL_PORT
down() {
  "${compose[@]}" logs --no-color --tail=30 >"${TMPDIR:-/tmp}/zonestream-compose.log" 2>&1 || true
  "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf .local-kube
}
trap down EXIT
rm -rf .local-kube

start=$(date +%s%N)
since() { echo "$(( ($(date +%s%N) - start) / 1000000 ))ms"; }
"${compose[@]}" up -d >/dev/null 2>&1 || { "${compose[@]}" up -d; exit 1; }
echo "compose: up returned after $(since)" >&2
# The Service, as soon as the apiserver takes it.
for _ in $(seq 1 240); do
  kubectl create service clusterip web --tcp=80 >/dev/null 2>&1 && break
  sleep 0.25
done
kubectl annotate service web external-dns.alpha.kubernetes.io/internal-hostname=web.example.org >/dev/null
ip=$(kubectl get service web -o jsonpath='{.spec.clusterIP}')
for _ in $(seq 1 240); do
  if [ "$(dig +short +time=1 +tries=1 @127.0.0.1 -p 1053 web.example.org A)" = "$ip" ]; then
    echo "compose: web.example.org A $ip answered by the compose BIND $(since) after docker compose up" >&2
    # The portal shows the name in sync: its BIND answers what is wanted.
    for _ in $(seq 1 120); do
      if curl -fsS "http://127.0.0.1:$ZS_PORTAL_PORT/api/names?q=web.example.org&status=in+sync" 2>/dev/null | grep -q '"name":"web.example.org"'; then
        echo "compose: the portal shows web.example.org in sync $(since) after docker compose up" >&2
        exit 0
      fi
      sleep 0.25
    done
    echo "compose: the portal never showed web.example.org in sync" >&2
    curl -sS "http://127.0.0.1:$ZS_PORTAL_PORT/api/names?q=web.example.org" >&2 || true
    exit 1
  fi
  sleep 0.25
done
echo "compose: web.example.org never answered $ip; logs in ${TMPDIR:-/tmp}/zonestream-compose.log" >&2
"${compose[@]}" ps >&2
exit 1
