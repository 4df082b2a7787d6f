// Package collector is zonestream's first stage: client-go shared informers
// turn every Kubernetes object a source watches into the complete set of
// DNS endpoints it wants, published as one events.SourceState per object to
// the sources stream, under zs.src.<cluster>.<source>.<namespace>.<name>.
//
// The collector is level-based and quiet: each message is the object's
// whole current truth, and a message is published only when its content
// hash differs from the last one on the subject (read back from the stream
// at start). Deletions become tombstones (a state without endpoints); a
// collector publishes no tombstone before its informers have synced.
package collector

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/template"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/collector/kubestatus"
	"github.com/zonestream/zonestream/services/collector/source"
	ambassadorsource "github.com/zonestream/zonestream/services/collector/source/ambassador"
	connectorsource "github.com/zonestream/zonestream/services/collector/source/connector"
	contoursource "github.com/zonestream/zonestream/services/collector/source/contour"
	crdsource "github.com/zonestream/zonestream/services/collector/source/crd"
	f5source "github.com/zonestream/zonestream/services/collector/source/f5"
	gatewaysource "github.com/zonestream/zonestream/services/collector/source/gateway"
	gloosource "github.com/zonestream/zonestream/services/collector/source/gloo"
	ingresssource "github.com/zonestream/zonestream/services/collector/source/ingress"
	istiosource "github.com/zonestream/zonestream/services/collector/source/istio"
	kongsource "github.com/zonestream/zonestream/services/collector/source/kong"
	nodesource "github.com/zonestream/zonestream/services/collector/source/node"
	openshiftsource "github.com/zonestream/zonestream/services/collector/source/openshift"
	podsource "github.com/zonestream/zonestream/services/collector/source/pod"
	servicesource "github.com/zonestream/zonestream/services/collector/source/service"
	skippersource "github.com/zonestream/zonestream/services/collector/source/skipper"
	traefiksource "github.com/zonestream/zonestream/services/collector/source/traefik"
	unstructuredsource "github.com/zonestream/zonestream/services/collector/source/unstructured"
	"github.com/zonestream/zonestream/stage"
)

// Name is the collector stage's name: its command and its log attribute.
const Name = "collector"

// DefaultClusterName names the cluster when --cluster-name is not given.
const DefaultClusterName = "default"

// DefaultWorkers is how many objects are computed and published at once.
const DefaultWorkers = 4

// Config is everything a collector is configured with; RegisterFlags binds
// it to the command line with ExternalDNS' flag names.
type Config struct {
	// Kubeconfig and Master locate the API server (--kubeconfig, --master).
	// Both empty: in-cluster config, else $KUBECONFIG / ~/.kube/config.
	Kubeconfig string
	Master     string
	// RESTConfig, when set, is used instead of Kubeconfig and Master (tests,
	// the all-in-one binary).
	RESTConfig *rest.Config
	// KubeAPIQPS and KubeAPIBurst limit the client's requests to the API
	// server (--kube-api-qps, --kube-api-burst).
	KubeAPIQPS, KubeAPIBurst int
	// PrivateBus: no other cluster's collector shares the bus (the
	// all-in-one's embedded NATS), so --cluster-name needs no binding to
	// this cluster when its identity cannot be read.
	PrivateBus bool

	// Sources are the --source names to run ("service", "ingress", "crd").
	Sources stage.StringList
	// ClusterName names the cluster in every subject (--cluster-name).
	ClusterName string
	// Namespace limits the collector to one namespace; empty: all.
	Namespace string
	// Namespaces are the --namespace flag's values: NewForNamespaces runs
	// one collector per namespace (New reads only Namespace).
	Namespaces stage.StringList
	// LabelFilter and AnnotationFilter select objects, in label-selector
	// syntax (--label-filter, --annotation-filter).
	LabelFilter      string
	AnnotationFilter string
	// TargetNetFilter and ExcludeTargetNet keep and drop targets by
	// network (--target-net-filter, --exclude-target-net).
	TargetNetFilter, ExcludeTargetNet stage.StringList
	// NAT64Networks are the /96 networks whose AAAA targets also give A
	// records (--nat64-networks).
	NAT64Networks stage.StringList
	// DefaultTargets and ForceDefaultTargets give endpoints without
	// targets (DNSEndpoint entries), or with Force every endpoint, these
	// targets (--default-targets, --force-default-targets).
	DefaultTargets      stage.StringList
	ForceDefaultTargets bool
	// CreatePTR gives every A and AAAA record its PTR records
	// (--create-ptr; PTR must be in --managed-record-types, which alone
	// lets objects ask for them with the record-type annotation).
	CreatePTR bool
	// PreferAlias sets alias=true on every CNAME endpoint that does not
	// say otherwise, asking providers with ALIAS records for one
	// (--prefer-alias, ExternalDNS v0.23).
	PreferAlias bool

	// AnnotationPrefix, when set, is the only prefix annotations are read
	// under (--annotation-prefix); empty: both of ExternalDNS' prefixes,
	// the alpha one winning. Process-wide: see source.SetAnnotationPrefix.
	AnnotationPrefix string
	// LegacyAnnotationPrefix (--enable-legacy-annotation-prefix, v0.23)
	// also reads the alpha prefix after --annotation-prefix.
	LegacyAnnotationPrefix bool

	// FQDNTemplate, CombineFQDNAnnotation and IgnoreHostnameAnnotation are
	// shared by every source that makes hostnames from annotations.
	FQDNTemplate             string
	CombineFQDNAnnotation    bool
	IgnoreHostnameAnnotation bool
	// TargetTemplate (--target-template) gives the targets of the
	// --fqdn-template names, and FQDNTargetTemplate
	// (--fqdn-target-template) name:target pairs, in the sources that
	// read them as ExternalDNS v0.23 does (source.SharedOptions).
	TargetTemplate     string
	FQDNTargetTemplate string

	// Service, Ingress and CRD hold the sources' own flags.
	Service servicesource.Flags
	Ingress ingresssource.Flags
	CRD     crdsource.Flags
	// Gateway holds the flags of the gateway-* sources.
	Gateway gatewaysource.Flags
	// Node and Pod hold the node and pod sources' flags.
	Node nodesource.Flags
	Pod  podsource.Flags
	// Istio holds the istio-gateway and istio-virtualservice sources'
	// settings (no flags).
	Istio istiosource.Flags
	// Ambassador holds the ambassador-host source's settings (no flags).
	Ambassador ambassadorsource.Flags
	// F5 holds the f5-virtualserver and f5-transportserver sources'
	// settings (no flags).
	F5 f5source.Flags
	// Skipper holds the skipper-routegroup source's flags.
	Skipper skippersource.Flags
	// Gloo holds the gloo-proxy source's flags.
	Gloo gloosource.Flags
	// OpenShift holds the openshift-route source's flags.
	OpenShift openshiftsource.Flags
	// Traefik holds the traefik-proxy source's flags.
	Traefik traefiksource.Flags
	// Contour holds the contour-httpproxy source's settings (no flags).
	Contour contoursource.Flags
	// Kong holds the kong-tcpingress source's settings (no flags).
	Kong kongsource.Flags
	// Unstructured holds the unstructured source's flags
	// (--unstructured-resource, --target-template, --fqdn-target-template).
	Unstructured unstructuredsource.Flags
	// Connector holds the connector source's flags
	// (--connector-source-server).
	Connector connectorsource.Flags

	// ManagedRecordTypes are the record types the pipeline manages
	// (--managed-record-types; empty: A, AAAA, CNAME). The collector only
	// needs it to know whether to publish the SRV records of NodePort
	// Services. The flag is shared with the planner (stage.Shared).
	ManagedRecordTypes stage.StringList

	// KubeStatus brings the pipeline's outcome back to the objects:
	// DNSEndpoint conditions, and the Events of EmitEvents (--kube-status,
	// on by default on the command line; the zero Config leaves it off).
	KubeStatus bool
	// EmitEvents are the reasons of the Events written on the objects
	// (--events-emit, kubestatus.EventReasons). None by default, as in
	// ExternalDNS: an Event per changed record is an API write per change.
	EmitEvents stage.StringList
	// Ownership is the planner's TXT registry configuration, read to tell
	// names another owner holds (stage.Shared).
	Ownership registry.Settings

	// Workers is how many objects are processed concurrently (default 4).
	Workers int

	// Heartbeat is how often the collector renews its synced mark
	// (--heartbeat-interval, shared with dedup; default
	// events.DefaultHeartbeat). A mark not renewed within three intervals
	// lapses, and deletes are held until the collector is back.
	Heartbeat time.Duration
}

// RegisterFlags adds the collector's flags to fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.KubeAPIQPS, "kube-api-qps", 50, "most requests per second to the Kubernetes API server (ExternalDNS' default: 5; the informers list once, then watch)")
	fs.IntVar(&c.KubeAPIBurst, "kube-api-burst", 100, "most requests in a burst to the Kubernetes API server (ExternalDNS' default: 10)")
	fs.Var(&c.Sources, "source", "source of endpoints to run: "+strings.Join(KnownSources(), ", ")+"; repeatable")
	fs.StringVar(&c.ClusterName, "cluster-name", DefaultClusterName, "name of this cluster in every published subject")
	fs.Var(&c.Namespaces, "namespace", "limit sources to this namespace; repeatable (one collector per namespace); empty: all namespaces")
	fs.StringVar(&c.LabelFilter, "label-filter", "", "only use objects whose labels match this label selector")
	fs.Var(&c.TargetNetFilter, "target-net-filter", "publish only targets in these networks (CIDR, repeatable); a hostname target is in none")
	fs.Var(&c.ExcludeTargetNet, "exclude-target-net", "never publish targets in these networks (CIDR, repeatable)")
	fs.Var(&c.NAT64Networks, "nat64-networks", "IPv6 /96 NAT64 networks: an AAAA target in one also publishes the A record of the IPv4 address it embeds (repeatable)")
	fs.Var(&c.DefaultTargets, "default-targets", "targets (IP addresses or host names, repeatable) of DNSEndpoint entries that have none; the record type follows each target")
	fs.BoolVar(&c.ForceDefaultTargets, "force-default-targets", false, "give every endpoint of every source the --default-targets instead of its own (ExternalDNS' legacy behaviour)")
	fs.BoolVar(&c.CreatePTR, "create-ptr", false, "publish the PTR records of every A and AAAA record (needs PTR in --managed-record-types); an object's record-type annotation overrides it: \"ptr\" or \"\"")
	fs.BoolVar(&c.PreferAlias, "prefer-alias", false, "set the alias property on every CNAME endpoint that has none, asking providers with ALIAS records (aws without --aws-prefer-cname, in a build with -tags externaldns; a webhook provider that reads it) for an ALIAS instead of a CNAME")
	fs.StringVar(&c.AnnotationFilter, "annotation-filter", "", "only use objects whose annotations match this selector (label-selector syntax)")
	fs.StringVar(&c.AnnotationPrefix, "annotation-prefix", "", "the only prefix external-dns annotations are read under (ending in '/'); empty: "+
		source.AnnotationPrefixAlpha+" and "+source.AnnotationPrefix+", the first winning when both set a key")
	fs.BoolVar(&c.LegacyAnnotationPrefix, "enable-legacy-annotation-prefix", false, "with --annotation-prefix, also read annotations under "+
		source.AnnotationPrefixAlpha+", the given prefix winning (ExternalDNS v0.23)")
	// Repeated, the templates are joined with commas, as ExternalDNS v0.22 does.
	fs.Var(stage.JoinedString{P: &c.FQDNTemplate, Sep: ","}, "fqdn-template", "Go template over the object making comma-separated hostnames, for objects without hostname annotation; repeatable, each adding its names")
	fs.Var(stage.JoinedString{P: &c.TargetTemplate, Sep: ","}, "target-template", "Go template over the object making comma-separated targets for the --fqdn-template hostnames (traefik-proxy, unstructured); repeatable")
	fs.Var(stage.JoinedString{P: &c.FQDNTargetTemplate, Sep: ","}, "fqdn-target-template", "Go template over the object making comma-separated name:target pairs, for objects without records of their own (pod, service, node, traefik-proxy, unstructured); repeatable")
	fs.BoolVar(&c.CombineFQDNAnnotation, "combine-fqdn-annotation", false, "use the --fqdn-template hostnames in addition to the annotated ones")
	fs.BoolVar(&c.IgnoreHostnameAnnotation, "ignore-hostname-annotation", false, "ignore the hostname and internal-hostname annotations")
	c.Service.RegisterFlags(fs)
	c.Ingress.RegisterFlags(fs)
	c.CRD.RegisterFlags(fs)
	c.Gateway.RegisterFlags(fs)
	c.Node.RegisterFlags(fs)
	c.Pod.RegisterFlags(fs)
	c.Skipper.RegisterFlags(fs)
	c.Gloo.RegisterFlags(fs)
	c.OpenShift.RegisterFlags(fs)
	c.Traefik.RegisterFlags(fs)
	c.Unstructured.RegisterFlags(fs)
	c.Connector.RegisterFlags(fs)
	fs.BoolVar(&c.KubeStatus, "kube-status", true, "write the pipeline's outcome back to the objects: a Ready condition on DNSEndpoints, and the Events of --events-emit")
	fs.Var(&c.EmitEvents, "events-emit", "Events to write on the objects, by reason (repeatable or comma-separated: "+
		strings.Join(kubestatus.EventReasons, ", ")+"); default none, as ExternalDNS")
}

// factories build a fresh instance of every known source.
var factories = map[string]func(*Collector) (source.Source, error){
	servicesource.Name: func(c *Collector) (source.Source, error) {
		return servicesource.New(servicesource.Options{
			Flags: c.cfg.Service, SharedOptions: c.sharedOptions(), ManagedRecordTypes: c.cfg.ManagedRecordTypes,
			ExposeInternalIPv6: c.cfg.Node.ExposeInternalIPv6, IncludeUnschedulable: c.cfg.Node.IncludeUnschedulable,
		})
	},
	ingresssource.Name: func(c *Collector) (source.Source, error) {
		return ingresssource.New(ingresssource.Options{
			Flags: c.cfg.Ingress, SharedOptions: c.sharedOptions(), AnnotationFilter: c.cfg.AnnotationFilter,
		})
	},
	nodesource.Name: func(c *Collector) (source.Source, error) {
		return nodesource.New(nodesource.Options{Flags: c.cfg.Node, SharedOptions: c.sharedOptions()})
	},
	podsource.Name: func(c *Collector) (source.Source, error) {
		return podsource.New(podsource.Options{Flags: c.cfg.Pod, SharedOptions: c.sharedOptions()})
	},
	istiosource.GatewayName: func(c *Collector) (source.Source, error) {
		return istiosource.NewGatewaySource(c.istioOptions())
	},
	istiosource.VirtualServiceName: func(c *Collector) (source.Source, error) {
		return istiosource.NewVirtualServiceSource(c.istioOptions())
	},
	openshiftsource.Name: func(c *Collector) (source.Source, error) {
		return openshiftsource.New(openshiftsource.Options{
			Flags: c.cfg.OpenShift, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	},
	traefiksource.Name: func(c *Collector) (source.Source, error) {
		return traefiksource.New(traefiksource.Options{
			Flags: c.cfg.Traefik, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	},
	contoursource.Name: func(c *Collector) (source.Source, error) {
		return contoursource.New(contoursource.Options{
			Flags: c.cfg.Contour, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	},
	kongsource.Name: func(c *Collector) (source.Source, error) {
		return kongsource.New(kongsource.Options{
			Flags: c.cfg.Kong, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	},
	crdsource.Name: func(c *Collector) (source.Source, error) {
		return crdsource.New(crdsource.Options{
			Flags: c.cfg.CRD, Filters: c.filters, Namespace: c.cfg.Namespace,
			DefaultTargets: c.defaults, APIOptions: c.apiOptions(),
		})
	},
}

// The gateway-* sources, one per route kind.
func init() {
	for _, k := range gatewaysource.Kinds {
		factories[k.Source] = func(c *Collector) (source.Source, error) {
			return gatewaysource.New(k, gatewaysource.Options{
				Flags: c.cfg.Gateway, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
			})
		}
	}
}

func (c *Collector) istioOptions() istiosource.Options {
	return istiosource.Options{
		Flags: c.cfg.Istio, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
	}
}

// sharedOptions are the source.SharedOptions of c's configuration.
func (c *Collector) sharedOptions() source.SharedOptions {
	return source.SharedOptions{
		Filters: c.filters, FQDNTemplate: c.tmpl, TargetTemplate: c.targetTmpl, FQDNTargetTemplate: c.fqdnTargetTmpl,
		CombineFQDNAnnotation: c.cfg.CombineFQDNAnnotation, IgnoreHostnameAnnotation: c.cfg.IgnoreHostnameAnnotation,
	}
}

// apiOptions are the source.APIOptions of c: its API server client and
// logger.
func (c *Collector) apiOptions() source.APIOptions {
	return source.APIOptions{RESTConfig: c.restConfig, Client: c.client, Logger: c.logger}
}

// KnownSources lists the --source names this collector knows.
func KnownSources() []string {
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Collector runs the configured sources and publishes their objects'
// endpoints. It satisfies stage.Runner (package stage).
type Collector struct {
	cfg        Config
	logger     *slog.Logger
	restConfig *rest.Config
	client     kubernetes.Interface
	filters    source.Filters
	targets    source.TargetNets
	nat64      source.NAT64
	defaults   source.DefaultTargets
	ptr        source.PTR
	tmpl       *template.Template
	// targetTmpl and fqdnTargetTmpl are --target-template and
	// --fqdn-target-template.
	targetTmpl, fqdnTargetTmpl *template.Template

	runMu   sync.Mutex // held while Run runs: one Run at a time
	readyMu sync.Mutex
	ready   error
	// watch follows the reads of the Kubernetes API (watchhealth.go).
	watch *watchHealth
}

var _ stage.Runner = (*Collector)(nil)

// LeaseKey names the lease of which the holder is the one collector of
// this cluster and set of sources at work: two would publish runs, marks
// and tombstones over each other.
func (c *Collector) LeaseKey() string {
	return events.CollectorLease(c.cfg.ClusterName, events.CollectorID(c.cfg.Sources, c.cfg.Namespace))
}

// New validates cfg, builds the Kubernetes client and returns a collector.
func New(cfg Config, logger *slog.Logger) (*Collector, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.ClusterName == "" {
		cfg.ClusterName = DefaultClusterName
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = events.DefaultHeartbeat
	}
	if cfg.Heartbeat < 0 {
		return nil, fmt.Errorf("--heartbeat-interval=%s: must be positive", cfg.Heartbeat)
	}
	if err := kubestatus.CheckEventReasons(cfg.EmitEvents); err != nil {
		return nil, fmt.Errorf("--events-emit: %w", err)
	}
	if len(cfg.Sources) == 0 {
		return nil, fmt.Errorf("no --source given (known: %s)", strings.Join(KnownSources(), ", "))
	}
	cfg.Sources = slices.Compact(slices.Sorted(slices.Values(cfg.Sources)))
	for _, s := range cfg.Sources {
		if _, ok := factories[s]; !ok {
			return nil, fmt.Errorf("--source %q: unknown source (known: %s)", s, strings.Join(KnownSources(), ", "))
		}
	}
	c := &Collector{cfg: cfg, logger: logger, ready: errors.New("not running")}
	var err error
	if c.filters, err = source.ParseFilters(cfg.LabelFilter, cfg.AnnotationFilter); err != nil {
		return nil, err
	}
	if c.targets, err = source.ParseTargetNets(cfg.TargetNetFilter, cfg.ExcludeTargetNet); err != nil {
		return nil, err
	}
	if c.nat64, err = source.ParseNAT64(cfg.NAT64Networks); err != nil {
		return nil, err
	}
	if err := source.SetAnnotationPrefix(cfg.AnnotationPrefix, cfg.LegacyAnnotationPrefix); err != nil {
		return nil, err
	}
	if c.defaults, err = source.ParseDefaultTargets(cfg.DefaultTargets, cfg.ForceDefaultTargets); err != nil {
		return nil, err
	}
	if c.ptr, err = source.ParsePTR(cfg.CreatePTR, cfg.ManagedRecordTypes); err != nil {
		return nil, err
	}
	if c.tmpl, err = source.ParseFQDNTemplate(cfg.FQDNTemplate); err != nil {
		return nil, err
	}
	if c.targetTmpl, err = source.ParseTemplate(source.FlagTargetTemplate, cfg.TargetTemplate); err != nil {
		return nil, err
	}
	if c.fqdnTargetTmpl, err = source.ParseTemplate(source.FlagFQDNTargetTemplate, cfg.FQDNTargetTemplate); err != nil {
		return nil, err
	}
	if c.restConfig, err = restConfig(cfg); err != nil {
		return nil, err
	}
	c.watch = newWatchHealth(cfg.ClusterName)
	c.restConfig.Wrap(c.watch.wrap)
	if c.client, err = kubernetes.NewForConfig(c.restConfig); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	// Build every source once to validate its options; Run builds fresh
	// ones, since a source binds to one informer factory.
	if _, err := c.buildSources(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Collector) buildSources() (map[string]source.Source, error) {
	out := make(map[string]source.Source, len(c.cfg.Sources))
	for _, name := range c.cfg.Sources {
		s, err := factories[name](c)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

func restConfig(cfg Config) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	switch {
	case cfg.RESTConfig != nil:
		rc = rest.CopyConfig(cfg.RESTConfig)
	case cfg.Kubeconfig == "" && cfg.Master == "":
		if rc, err = rest.InClusterConfig(); err != nil {
			rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
		}
	default:
		rc, err = clientcmd.BuildConfigFromFlags(cfg.Master, cfg.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config: %w", err)
	}
	if cfg.KubeAPIQPS > 0 {
		rc.QPS = float32(cfg.KubeAPIQPS)
	}
	if cfg.KubeAPIBurst > 0 {
		rc.Burst = cfg.KubeAPIBurst
	}
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 50, 100 // a Config built without its flags
	}
	rc.UserAgent = "zonestream-collector"
	return rc, nil
}

// Ready returns nil once the informers have synced and every object (and
// every previously published subject) has been processed once, unless
// the reads of the Kubernetes API have failed for longer than
// WatchErrorGrace since.
func (c *Collector) Ready() error {
	c.readyMu.Lock()
	defer c.readyMu.Unlock()
	if c.ready != nil {
		return c.ready
	}
	return c.watch.check(WatchErrorGrace)
}

func (c *Collector) setReady(err error) {
	c.readyMu.Lock()
	c.ready = err
	c.readyMu.Unlock()
	if err == nil {
		syncedGauge.Set(1)
	} else {
		syncedGauge.Set(0)
	}
}
