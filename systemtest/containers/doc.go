// Package containers runs zonestream as users do, from its container
// images: NATS and every stage in a container of its own
// (testcontainers-go), against the test harness' kube-apiserver and BIND,
// checked with DNS queries; and loads the docker-compose files.
//
// The container tests need a Docker engine and the images
// hack/containers.sh builds; they run only when ZS_SYSTEM_TESTS is set
// (hack/containers.sh sets it and runs this package), so the ordinary test
// run needs no Docker. The rest of the tests that run the whole system are
// in the parent package, systemtest.
package containers
