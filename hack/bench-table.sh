#!/usr/bin/env bash
# Prints the cost table (README: Tests): zonestream at rest (1k/5k/20k Services),
# per 1000 changes, latency, 100k names, pipeline throughput, providers
# against a bare client, beside ExternalDNS measured in the same run on the
# same kube-apiserver and BIND.
# Raw benchmark output goes to ${ZS_ARTIFACTS:-.artifacts}/bench/.
#
#   hack/bench-table.sh                      every row (about 50 minutes on 2 cores)
#   hack/bench-table.sh --rows idle,work     only some: idle work latency scale throughput providers externaldns
#   hack/bench-table.sh --rows moonshot      issue 25's 1,000,000 names alone (not in the default rows: over an hour)
#   hack/bench-table.sh --from FILE...       the table of saved output, nothing run
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh

table() { go run ./testenv/cmd/benchtable "$@"; }
rows=idle,work,latency,scale,throughput,providers,externaldns
while [ $# -gt 0 ]; do
  case "$1" in
    --from) shift; table "$@"; exit ;;
    --rows) rows=$2; shift 2 ;;
    --rows=*) rows=${1#--rows=}; shift ;;
    *) echo "bench-table: unknown argument $1" >&2; exit 2 ;;
  esac
done

KUBEBUILDER_ASSETS=$(hack/deps.sh | tail -n 1)
export KUBEBUILDER_ASSETS
export ZS_IDLE_SERVICES=${ZS_IDLE_SERVICES:-1000,5000,20000}
dir=${ZS_ARTIFACTS:-$PWD/.artifacts}/bench
mkdir -p "$dir"
out="$dir/$(date -u +%Y%m%dT%H%M%SZ).txt"
echo "bench-table: raw output in $out" >&2

bench() { go test -run '^$' -bench "$1" -benchtime="$2" -timeout 120m "$3" | tee -a "$out"; }
has() { [[ ",$rows," == *",$1,"* ]]; }

if has externaldns; then
  # ExternalDNS from the module proxy, once (cached like the other tools).
  edns=${ZS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zonestream}/tools/external-dns-v0.21.0
  if [ ! -x "$edns/external-dns" ]; then
    echo "bench-table: building ExternalDNS v0.21.0 (first time only, several minutes)" >&2
    (cd "$(mktemp -d)" && GOBIN=$edns GOFLAGS=-mod=mod go install -trimpath -ldflags="-s -w" sigs.k8s.io/external-dns@v0.21.0)
  fi
  export ZS_EXTERNAL_DNS=$edns/external-dns
  bench 'BenchmarkExternalDNS' 1x ./systemtest/
fi
if has idle; then
  bench 'BenchmarkIdle$' 1x ./systemtest/
  bench 'BenchmarkIdleFloor' 1x ./systemtest/
fi
if has work; then bench 'BenchmarkWorkPerChange' 1x ./systemtest/; fi
if has latency; then
  bench 'BenchmarkStatusToRecord' 20x ./systemtest/
  bench 'BenchmarkConverge/500' 1x ./systemtest/
fi
# 100k names unless $ZS_SCALE_NAMES / $ZS_THROUGHPUT_EVENTS say fewer.
if has scale; then bench 'BenchmarkScale' 1x ./systemtest/; fi
# At a million names on 2 cores dedup's first read of the sources falls
# minutes behind them: tombstones live 45 minutes, so that it is cut off
# only after 15 (README: Limits). Its live heap nears 11 GB: GOMEMLIMIT
# holds the all-in-one to 13 GiB beside the kube-apiserver, etcd and BIND
# in 24 (without it, collection paced as GOGC=100 ran the machine out).
if has moonshot; then ZS_SCALE_GOMEMLIMIT=13GiB ZS_TOMBSTONE_TTL=45m ZS_SCALE_NAMES=1000000 bench 'BenchmarkScale' 1x ./systemtest/; fi
if has throughput; then bench 'BenchmarkThroughput' 1x ./systemtest/; fi
if has providers; then bench 'BenchmarkApply/.*/zone=10000/plan=1000' 3x ./services/applier/; fi
table "$out"
