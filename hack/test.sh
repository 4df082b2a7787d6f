#!/usr/bin/env bash
# README's test command: every test of every module, against a real
# kube-apiserver, JetStream and BIND. Extra arguments go to `go test`
# (e.g. hack/test.sh -run TestEndToEnd).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/go-env.sh

KUBEBUILDER_ASSETS=$(hack/deps.sh | tail -n 1)
export KUBEBUILDER_ASSETS
# CoreDNS with its etcd plugin, for the coredns provider's tests
# (testenv/coredns finds it in the cache). Only the tests need it.
hack/coredns.sh >/dev/null
# helm and the NATS CLI, for TestHelmChart and TestNATSCLIReadsTheBus.
tools=$(hack/tools.sh | tail -n 1)
export ZS_HELM=$tools/helm ZS_NATS_CLI=$tools/nats
# Chromium, for the portal's browser test; its screenshots go to $ZS_ARTIFACTS.
hack/chromium.sh
export ZS_ARTIFACTS=${ZS_ARTIFACTS:-$PWD/.artifacts}
echo "test artifacts (portal screenshots): $ZS_ARTIFACTS" >&2

# Every module of the workspace, so that a new one is tested without
# anyone remembering to add it here.
mapfile -t modules < <(go list -m -f '{{.Dir}}')
pkgs=()
for m in "${modules[@]}"; do pkgs+=("$m/..."); done
go vet "${pkgs[@]}"
go vet -tags demo ./cmd/zonestream/...  # the demo, built only with -tags demo
# zonestream with every provider of ExternalDNS, built only with -tags
# externaldns, and the system tests that run it.
go vet -tags externaldns ./cmd/zonestream/... ./systemtest/...
unformatted=$(gofmt -l "${modules[@]}")
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi
go test -count=1 -timeout 25m "$@" "${pkgs[@]}"
# The all-in-one with ExternalDNS' providers, end to end into Route53 (moto),
# and as ExternalDNS' own Helm chart runs it for aws and cloudflare; and its
# command line: help in every command, a misspelled flag, the version; and
# the lists of the linked ExternalDNS (flags, sources, providers) against ours.
if [ $# -eq 0 ]; then go test -count=1 -timeout 10m -tags externaldns -run 'TestDNSProvidersPerNamespace|TestRoute53|TestExternalDNSChartCloud|TestHelp|TestMisspelled|TestVersionNames|TestLinkedExternalDNS' ./systemtest ./cmd/zonestream/cli; fi
# The whole run also runs the images, the system tests in containers and
# the docker-compose stack (Docker engine started here if none runs).
if [ $# -eq 0 ]; then hack/containers.sh; fi
# The Helm chart on a real node (kubelet, containerd, CNI): one helm
# install in each mode brings a Service into BIND; upgrade, uninstall.
if [ $# -eq 0 ]; then hack/helm-node.sh; fi
