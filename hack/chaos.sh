#!/usr/bin/env bash
# The chaos command: kill -9 a random stage or the NATS server
# during bursts of changes, and check that nothing wanted is deleted or
# lost. It is TestChaos, set up as hack/test.sh sets up every test; extra
# arguments go to `go test` and to the test, e.g. the full run:
#   hack/chaos.sh -chaos.trials=100 -chaos.changes=10000
# Other flags: -chaos.seed (replay a run), -chaos.victims, -chaos.stable,
# -chaos.max-down, -chaos.converge, -chaos.burst-timeout, -chaos.bound (a
# trial converging later than this after its last change fails; 15s),
# -chaos.history=N (N objects created and deleted on the bus first: a
# long run's tombstones, for a few trials to restart on).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh

KUBEBUILDER_ASSETS=$(hack/deps.sh | tail -n 1)
export KUBEBUILDER_ASSETS
# Every trial is bounded in time by the test itself; a long run must not
# be cut by go test's default 10 minutes (a later -timeout wins).
exec go test -count=1 -timeout 24h -run '^TestChaos$' -v ./systemtest "$@"
