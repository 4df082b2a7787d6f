// Package collectortest is test support only: the harness the collector's
// tests and the sources' rule tables share. Each test package's TestMain
// calls Main, which starts one kube-apiserver and one embedded JetStream
// for the whole package; the helpers create objects on that apiserver, run
// collectors against it and read what they publish.
//
// It lives outside _test.go files so that an external test package beside
// a source (package node_test in source/node) can import it together with
// the collector that runs the source.
package collectortest
