package source

import (
	"errors"
	"fmt"
	"log/slog"
	"text/template"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// SharedOptions are the settings the collector's shared flags give every
// source that reads annotations and templates; each such source's Options
// embeds them.
type SharedOptions struct {
	// Filters are --label-filter and --annotation-filter.
	Filters Filters
	// FQDNTemplate makes hostnames from the object (--fqdn-template); nil:
	// none (the Node source then uses the Node's name).
	FQDNTemplate *template.Template
	// TargetTemplate gives the targets of the FQDNTemplate names in the
	// sources whose objects carry none for them (--target-template); nil:
	// none.
	TargetTemplate *template.Template
	// FQDNTargetTemplate gives name:target pairs (--fqdn-target-template;
	// Inputs.AddTemplatePairs); nil: none.
	FQDNTargetTemplate *template.Template
	// CombineFQDNAnnotation adds the template's hostnames to the annotated
	// ones instead of using them only as a fallback
	// (--combine-fqdn-annotation).
	CombineFQDNAnnotation bool
	// IgnoreHostnameAnnotation ignores the hostname annotations
	// (--ignore-hostname-annotation). The Pod source, which has no such
	// setting in ExternalDNS, ignores it.
	IgnoreHostnameAnnotation bool
}

// APIOptions are what a source that runs informers of its own (lazy,
// dynamic ones) needs beside the shared informer factory.
type APIOptions struct {
	// RESTConfig and Client reach the API server.
	RESTConfig *rest.Config
	Client     kubernetes.Interface
	// Logger receives the informers' start-up messages (default
	// slog.Default).
	Logger *slog.Logger
}

// Dynamic is the dynamic client of the source named name (for its
// errors), for the sources that read resources by their group and
// version; it does no I/O.
func (o APIOptions) Dynamic(name string) (dynamic.Interface, error) {
	if o.RESTConfig == nil || o.Client == nil {
		return nil, fmt.Errorf("%s source: %w", name, errors.New("no API server client"))
	}
	dyn, err := dynamic.NewForConfig(o.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("%s source: dynamic client: %w", name, err)
	}
	return dyn, nil
}
