//go:build ignore

// The pod sandbox's process (registry.k8s.io/pause cannot be pulled here):
// it waits for SIGTERM. hack/helm-node.sh builds it into a FROM scratch image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
