// Package dnsprovider runs one applier per DNSProvider and
// ClusterDNSProvider object (zonestream.io/v1alpha1): started, restarted
// and stopped as the objects and their credential Secrets come, change
// and go, each under its own name on the bus (events.DeclaredProvider).
//
// The applier runs it with --dnsproviders (Stage wraps the applier's stage
// definition; New builds the controller alone). Per object:
//
//   - watch.go: informers on both kinds (DNSProviders of every namespace, or
//     of each --dnsprovider-namespace) and on the Secrets of the same
//     namespaces (all of them: Secrets carry no label to select ours by);
//   - decode.go, validate.go: the object as plain structs, and what builds
//     its provider: settings become flags, the Secret's keys named like
//     flags too, those named like environment variables go to the SDK; a
//     credential flag in settings, a setting that is no flag of the
//     provider, a Secret missing are refused with a reason (reasons.go);
//   - reconcile.go, running.go: the provider built (zonestream's own by
//     applier.Build, others by the Builder) and its applier run under its
//     own lease (events.ApplierLease), replaced when the object's
//     generation or its Secret's resourceVersion changes;
//   - statuswrite.go: the status, written by the lease holder alone and
//     only when it changed;
//   - finalizer.go, remove.go, sweep.go: deletionPolicy Delete holds the
//     object (Finalizer) until its provider holds no name for us; a gone
//     object's applier stops and its zone list is withdrawn (no zones, no
//     scope: events/routing forgets the provider), its records left in DNS.
//
// A build with ExternalDNS' providers (-tags externaldns) passes its
// Builder: Stage(def, build) for the stage, or New(cfg, build, logger).
package dnsprovider
