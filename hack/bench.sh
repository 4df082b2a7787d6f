#!/usr/bin/env bash
# Prints zonestream's latency and convergence figures on this machine:
# status patch -> record in BIND (20 samples), and N Services -> BIND.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh
KUBEBUILDER_ASSETS=$(hack/deps.sh | tail -n 1)
export KUBEBUILDER_ASSETS
go test -run '^$' -bench 'BenchmarkStatusToRecord' -benchtime=20x ./systemtest/
go test -run '^$' -bench 'BenchmarkConverge' -benchtime=1x ./systemtest/
# Planner with 100k names in place.
go test -run '^$' -bench 'BenchmarkPlanOneNameChange|BenchmarkPlanBusyZoneFlood' -benchtime=2000x ./services/planner/
go test -run '^$' -bench 'BenchmarkFirstPlan|BenchmarkMemoryPerName' -benchtime=1x ./services/planner/
# Bus: storing a name's new state when its old one sits in an uncached block.
go test -run '^$' -bench 'BenchmarkStoreOverColdBlock' -benchtime=5x ./events/
# Dedup with 100k names in place: one changed object recomputed and published; heap per name.
go test -run '^$' -bench 'BenchmarkMergeOneChange' -benchmem -benchtime=2000x ./services/dedup/
go test -run '^$' -bench 'BenchmarkMemoryPerName' -benchtime=1x ./services/dedup/
# Applier: changes/s applied to BIND and PowerDNS by zonestream's applier
# next to a bare client (miekg/dns UPDATEs, plain PATCHes) on the same
# server in the same run; zs/bare is the ratio.
go test -run '^$' -bench 'BenchmarkApply' -benchtime=3x ./services/applier/
# Collector at scale (real kube-apiserver, embedded JetStream): 10k Services;
# 1k Gateways with 10k HTTPRoutes. Heap/RSS, cache bytes per object with and
# without the transform, sync -> all published, one Gateway change -> its
# routes republished.
go test -run '^$' -bench 'BenchmarkCollectorServices|BenchmarkCollectorGatewayRoutes' -benchtime=1x -timeout 30m ./services/collector/
# Portal: explain with 10^6 events in the streams; projection heap per name;
# the list page with 10k names, served and loaded in chromium.
go test -run '^$' -bench 'BenchmarkExplain$' -benchtime=20x -timeout 30m ./systemtest/
go test -run '^$' -bench 'BenchmarkMemoryPerName' -benchtime=1x ./services/portal/projection/
go test -run '^$' -bench 'BenchmarkListPage10k|BenchmarkPageLoadInChromium' -benchtime=10x ./services/portal/web/
# At rest: the all-in-one with 1000 Services in BIND, nothing
# changing, --interval=1m: its own CPU-seconds per idle minute (twice, from
# /proc), RSS, and a CPU profile of the second minute in $ZS_IDLE_PROFILE_DIR.
ZS_IDLE_PROFILE_DIR=${ZS_IDLE_PROFILE_DIR:-$(mktemp -d)} go test -run '^$' -bench 'BenchmarkIdle' -benchtime=1x -timeout 20m -v ./systemtest/
