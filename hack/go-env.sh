# Sourced by every script that runs go. ExternalDNS v0.23, whose provider
# code the externaldns build links, needs Go 1.27; a machine starts on the
# Go it has and ignores go.work's version, so the toolchain is named here.
# The go command fetches it from the Go module proxy once (about 76 MB) and
# keeps it in the module cache.
export GOTOOLCHAIN=go1.27.3
