// Package systemtest runs zonestream as users do, from its container
// images: NATS and every stage in a container of its own
// (testcontainers-go), against the test harness' kube-apiserver and BIND,
// checked with DNS queries.
//
// The tests need a Docker engine and the images hack/containers.sh builds;
// they run only when ZS_SYSTEM_TESTS is set (hack/containers.sh sets it),
// so the ordinary test run needs no Docker.
package systemtest
