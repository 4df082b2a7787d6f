#!/usr/bin/env bash
# Runs zonestream the way users do, on a machine with no image registry:
# starts a Docker engine (unless one runs; stopped again at the end),
# builds the images from host-built binaries, runs the testcontainers-go
# container tests (systemtest/containers/), and brings the docker-compose stack up once to
# see a Service become a record in its BIND. hack/test.sh runs it after the
# Go tests (which include the Helm chart and NATS CLI tests).
#
#   hack/containers.sh            everything (hack/test.sh runs it)
#   hack/containers.sh images     only build the images
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh
CACHE=${ZS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zonestream}
log() { echo "containers: $*" >&2; }
step_start=$(date +%s)
step() { local now; now=$(date +%s); log "$1 ($(( now - step_start ))s so far)"; }

source hack/containers/engine.sh
source hack/containers/images.sh

KUBEBUILDER_ASSETS=$(hack/kube-assets.sh | tail -n 1)
export KUBEBUILDER_ASSETS
TOOLS=$(hack/tools.sh | tail -n 1)
install_packages
start_engine
build_images
step "images built"
[ "${1:-}" = images ] && exit 0

# testcontainers-go on these machines: no reaper (its image cannot be
# pulled; every test cleans up after itself), and the engine's published
# ports are on localhost.
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=localhost
# With no reaper, what an interrupted earlier run left goes first.
leftover=$($DOCKER ps -aq --filter label=org.testcontainers=true)
[ -z "$leftover" ] || $DOCKER rm -f $leftover >/dev/null
export ZS_SYSTEM_TESTS=1
go test -count=1 -timeout 15m ./systemtest/containers/
step "container tests passed"

hack/containers/compose-check.sh
step "compose stack converged"
