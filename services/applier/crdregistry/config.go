package crdregistry

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config is the CRD registry's part of the applier's configuration, from
// flags shared with the other stages.
type Config struct {
	Enabled   bool   // --registry=crd
	Namespace string // --crd-registry-namespace; empty: the namespace we run in, else "default"
	OwnerID   string // --txt-owner-id
	// Kubeconfig and Master (--kubeconfig, --master) locate the API server;
	// both empty: in-cluster, else $KUBECONFIG or ~/.kube/config.
	Kubeconfig, Master string
	// RESTConfig, when set, is used instead (tests).
	RESTConfig *rest.Config
}

// serviceAccountNamespace is where a pod finds the namespace it runs in.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// NewStore builds the store c describes.
func (c Config) NewStore(logger *slog.Logger) (*Store, error) {
	rc, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	ns := c.Namespace
	if ns == "" {
		ns = "default"
		if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
			ns = strings.TrimSpace(string(b))
		}
		if logger != nil {
			logger.Info("--registry=crd: --crd-registry-namespace not given, DNSRecords are kept in the namespace zonestream runs in", "namespace", ns)
		}
	}
	return NewStore(rc, ns, c.OwnerID, logger)
}

func (c Config) restConfig() (*rest.Config, error) {
	var rc *rest.Config
	var err error
	switch {
	case c.RESTConfig != nil:
		rc = rest.CopyConfig(c.RESTConfig)
	case c.Kubeconfig == "" && c.Master == "":
		if rc, err = rest.InClusterConfig(); err != nil {
			rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
		}
	default:
		rc, err = clientcmd.BuildConfigFromFlags(c.Master, c.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("--registry=crd: kubernetes config: %w", err)
	}
	rc.UserAgent = "zonestream-applier"
	return rc, nil
}
