package dnsprovider

import (
	"flag"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/zonestream/zonestream/events/leader"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/stage"
)

// Config is the controller's: its flags, and what the process gives it.
type Config struct {
	// Enabled (--dnsproviders) runs the controller.
	Enabled bool
	// Namespaces (--dnsprovider-namespace) are those whose DNSProviders
	// and Secrets are watched; empty: every one. ClusterDNSProviders are
	// always watched; their Secrets must then be in one of these.
	Namespaces stage.StringList

	// Applier is what every declared provider's applier starts from (the
	// applier's flags: --interval, --provider-timeout, the shared
	// ownership and pass flags); the object sets its scope and rate limit.
	Applier applier.Config
	// Kubeconfig and Master (--kubeconfig, --master) locate the API
	// server; RESTConfig, when set, is used instead (tests).
	Kubeconfig, Master string
	RESTConfig         *rest.Config
	// Election, when set, makes each declared provider's applier run only
	// in the replica holding its own lease (events.ApplierLease of its
	// bus name); nil: every one runs here (a private bus).
	Election *leader.Config
	// StatusInterval is how often the status of each object is looked at
	// (written only when it changed); default 2s.
	StatusInterval time.Duration
}

// RegisterFlags registers --dnsproviders and --dnsprovider-namespace.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Enabled, "dnsproviders", false, "run one applier per DNSProvider and ClusterDNSProvider object (zonestream.io/v1alpha1), "+
		"with its credentials from the Secret it names, and write their status; --provider may then be empty")
	fs.Var(&c.Namespaces, "dnsprovider-namespace", "with --dnsproviders: watch only these namespaces' DNSProviders and Secrets "+
		"(repeatable, or comma-separated; default: every namespace)")
}

func (c *Config) restConfig() (*rest.Config, error) {
	if c.RESTConfig != nil {
		return rest.CopyConfig(c.RESTConfig), nil
	}
	if c.Kubeconfig == "" && c.Master == "" {
		if rc, err := rest.InClusterConfig(); err == nil {
			return rc, nil
		}
		return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	}
	return clientcmd.BuildConfigFromFlags(c.Master, c.Kubeconfig)
}
