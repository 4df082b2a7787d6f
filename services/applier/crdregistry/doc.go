// Package crdregistry is ExternalDNS' CRD registry (--registry=crd,
// v0.22+): ownership kept in DNSRecord objects (externaldns.k8s.io/v1alpha1)
// instead of TXT records, so that a zone ExternalDNS owns that way can be
// taken over, and handed back.
//
// Like ExternalDNS' registry it wraps the provider, here in the applier,
// the only stage that talks to it. The planner keeps planning ownership
// TXT records, named as registry.CRDNames places them; the wrapper
//
//   - lists, beside the provider's records, one virtual ownership TXT per
//     DNSRecord that is Ready, ours or another owner's (virtual.go), and
//     hides the provider's own registry strings, which in crd mode neither
//     count nor get touched;
//   - applies a plan's ownership changes to DNSRecords, never to DNS:
//     written and marked Accepted before the provider call, Programmed or
//     Failed after it, deleted after the provider deleted the record
//     (apply.go).
package crdregistry
