#!/usr/bin/env bash
# Builds the Go tools the tests run for real, once, into the cache
# (~/.cache/zonestream/tools/<name>-<version>, linked as tools/<name>):
# the NATS CLI (TestNATSCLIReadsTheBus), helm (TestHelmChart), promtool
# (TestMonitoringRulesFireOnARealOutage), and
# nats-server for the NATS image (hack/containers.sh). Prints the tools
# directory on its last line.
set -euo pipefail
# Built outside the workspace, with the machine's own Go (go.work's
# toolchain, hack/go-env.sh, is for zonestream's modules).
export GOTOOLCHAIN=local
cd "$(dirname "$0")/.."
CACHE=${ZS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zonestream}
TOOLS=$CACHE/tools
mkdir -p "$TOOLS"

# tool COMMAND VERSION PACKAGE builds a Go command once (a GOBIN per
# version) and links it as $TOOLS/COMMAND.
tool() {
  local bin=$1 dir="$TOOLS/$1-$2" pkg=$3@$2
  if [ ! -x "$dir/$bin" ]; then
    echo "tools: building $pkg (first time only)" >&2
    GOBIN="$dir" CGO_ENABLED=0 go install -trimpath "$pkg"
  fi
  ln -sfn "$dir/$bin" "$TOOLS/$bin"
}

tool nats-server v2.15.2 github.com/nats-io/nats-server/v2
tool nats v0.5.1 github.com/nats-io/natscli/nats
tool helm v3.22.0 helm.sh/helm/v3/cmd/helm
tool promtool v0.316.0 github.com/prometheus/prometheus/cmd/promtool
echo "$TOOLS"
