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
# PowerDNS for the pdns provider's tests (testenv/pdns): the server, its
# SQLite backend, and the sqlite3 shell that creates the database.
command -v pdns_server >/dev/null 2>&1 || [ -x /usr/sbin/pdns_server ] || need+=(pdns-server)
compgen -G '/usr/lib/*/pdns/libgsqlite3backend.so' >/dev/null || need+=(pdns-backend-sqlite3)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
# MIT Kerberos for the rfc2136 provider's GSS-TSIG tests (testenv/kdc): the
# KDC with kdb5_util, and kadmin.local, which adds the test's principals.
[ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc)
[ -x /usr/sbin/kadmin.local ] || need+=(krb5-admin-server)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "deps: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Debian starts the packaged pdns service on port 53 where systemd runs
  # (without systemd it cannot, and says so). The tests run their own
  # pdns_server on free loopback ports; keep the system one off port 53.
  if [[ " ${need[*]} " == *" pdns-server "* ]] && [ -d /run/systemd/system ]; then
    echo "deps: stopping and disabling the packaged pdns service (the tests run their own)" >&2
    $sudo systemctl disable --now pdns.service >/dev/null 2>&1 || true
  fi
  # The packaged KDC services have no realm until one is configured, and
  # the tests run their own krb5kdc on loopback: keep them off.
  if [[ " ${need[*]} " == *" krb5-"* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now krb5-kdc.service krb5-admin-server.service >/dev/null 2>&1 || true
  fi
fi
# moto_server (Python moto 5.2.1) emulates Route53 for ExternalDNS' aws
# provider (services/applier/provider/externaldns); PyPI may be out of
# reach, so it is not installed here: say so, the tests skip without it.
if [ -z "${ZS_MOTO_SERVER:-}" ] && ! command -v moto_server >/dev/null 2>&1 && ! [ -x "$HOME/.pyenv/shims/moto_server" ]; then
  echo "deps: moto_server is missing: the Route53 tests of provider/externaldns will be skipped (pip install 'moto[server]==5.2.1', or set ZS_MOTO_SERVER)" >&2
fi
# Last: callers take the kube-apiserver assets directory from the last line.
hack/kube-assets.sh
