#!/usr/bin/env bash
# README's run command: zonestream on a machine with no cluster. Brings up a
# local kube-apiserver and BIND, runs zonestream (embedded NATS) against
# them, applies sample Services and shows their records appear in BIND.
# Arguments go to `zonestream demo` (e.g. --keep-running=false).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh
KUBEBUILDER_ASSETS=$(hack/deps.sh | tail -n 1)
export KUBEBUILDER_ASSETS
# The demo is built in with -tags demo: the harness it uses stays out of
# the binary users run.
exec go run -tags demo ./cmd/zonestream demo "$@"
