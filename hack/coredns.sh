#!/usr/bin/env bash
# Builds a small CoreDNS (only the bind, errors, log and etcd plugins) from the Go
# module proxy into a cache directory, for the coredns provider's tests
# (testenv/coredns). Debian ships no CoreDNS package; the module proxy is
# reachable from our CI machines. Built once, then reused.
#
#   hack/coredns.sh            -> prints the binary path
#   COREDNS_VERSION=1.14.7 ZS_CACHE=~/.cache/zonestream hack/coredns.sh
set -euo pipefail
# Built outside the workspace, with the machine's own Go (go.work's
# toolchain, hack/go-env.sh, is for zonestream's modules).
export GOTOOLCHAIN=local

COREDNS_VERSION=${COREDNS_VERSION:-1.14.7}
CACHE=${ZS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zonestream}
DIR="$CACHE/coredns/$COREDNS_VERSION"
BIN="$DIR/coredns"
mkdir -p "$DIR"

log() { echo "coredns: $*" >&2; }

build() {
  local work; work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  log "building CoreDNS v$COREDNS_VERSION with plugins bind, errors, log, etcd (first time only, a few minutes)"
  (
    cd "$work"
    go mod init zonestream.local/coredns-build >/dev/null 2>&1
    # The stock binary imports every plugin (core/plugin); importing only
    # the ones the tests need keeps the build small and fast. bind keeps the
    # server on loopback.
    cat >main.go <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/etcd"
	_ "github.com/coredns/coredns/plugin/log"
)

// The order in which the plugins handle a query, as in CoreDNS' plugin.cfg.
func init() { dnsserver.Directives = []string{"bind", "errors", "log", "etcd"} }

func main() { coremain.Run() }
GO
    go get "github.com/coredns/coredns@v$COREDNS_VERSION" >/dev/null 2>&1 || go get "github.com/coredns/coredns@v$COREDNS_VERSION"
    # go get, not go mod tidy (nor go mod download all): those fetch every
    # module of CoreDNS' graph, cloud SDKs included; -mod=mod fetches only
    # what the four plugins import.
    CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o "$BIN.tmp" .
    mv "$BIN.tmp" "$BIN"
  )
}

[ -x "$BIN" ] || build
"$BIN" -version >&2
echo "$BIN"
