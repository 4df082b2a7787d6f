// Package testenv is zonestream's test harness: the real parts every test
// and the demo run against. Each part has a context-based Start for the demo
// and a testing.TB-based helper that cleans up after the test.
//
//   - kube:    etcd + kube-apiserver on loopback, through envtest
//   - natsenv: an embedded JetStream server
//   - bind:    Debian's BIND 9 as a process, with a TSIG key and test zones
//     (GSS-TSIG too, with a keytab from kdc)
//   - kdc:     Debian's MIT Kerberos KDC as a process, with a realm of the
//     test's own: the Kerberos of GSS-TSIG
//   - pdns:    Debian's PowerDNS Authoritative Server (SQLite backend) as a
//     process, with its HTTP API and test zones
//   - cloudflare: a fake of the part of Cloudflare's API v4 that
//     ExternalDNS' cloudflare provider calls, written from the API's
//     documentation (not Cloudflare), served in process on loopback
//   - loopback: ports for those processes, out of the kernel's way
package testenv
