// Package systemtest holds every test that runs the whole system: the
// zonestream binary (built by TestMain) or its stages as processes, or the
// all-in-one in process, against a real kube-apiserver, JetStream and DNS
// servers (BIND, PowerDNS, CoreDNS, Route53 as moto emulates it), checked
// with DNS queries and the bus. End to end, chaos, high availability,
// JetStream cluster node loss, several clusters on one bus, the safety
// and security tests, the Kubernetes manifests and Helm charts (zonestream's
// and ExternalDNS'), the portal in a browser, the NATS CLI, and the
// benchmarks of the whole pipeline (bench_test.go, *_bench_test.go).
//
// The tests tagged externaldns (TestRoute53*, TestExternalDNSChartCloud,
// BenchmarkRoute53) run zonestream built with every provider of
// ExternalDNS: go test -tags externaldns. hack/test.sh runs them;
// hack/chaos.sh runs TestChaos; hack/bench.sh and hack/bench-table.sh the
// benchmarks.
//
// The folder containers/ runs the stages from their container images
// (testcontainers-go, Docker): hack/containers.sh.
//
// The commands' own unit tests (flag parsing, nats-config, decode, tail,
// explain, the embedded store) stay beside them in cmd/zonestream/cli.
package systemtest
