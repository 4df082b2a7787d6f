#!/usr/bin/env bash
# Installs the real parts the tests and the demo run against, from Debian's
# packages, and builds kube-apiserver from the Go module proxy (cached).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v named >/dev/null 2>&1 || [ -x /usr/sbin/named ] || need+=(bind9)
command -v dig >/dev/null 2>&1 || need+=(bind9-dnsutils)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "deps: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
hack/kube-assets.sh
