# zonestream: one image, every stage (`zonestream collector|dedup|planner|applier`),
# the all-in-one (`zonestream`) and every provider. Static, non-root, nothing
# but the binary. At the repository's root because it builds from all of it
# (every module of go.work). The image users pull, which the Helm chart runs
# for any provider.name (aws, google, cloudflare, ... rfc2136):
#   docker build --build-arg VERSION=0.1.0 -t zonestream:0.1.0 -t zonestream:latest .
# The lean build (rfc2136, pdns, coredns, webhook, inmemory only; about half
# the size, docs/install/helm.md), a tag of its own:
#   docker build --build-arg VERSION=0.1.0 --build-arg TAGS= -t zonestream:0.1.0-lean .
# (CI builds the same image from a binary built on the host:
# hack/containers/zonestream.Dockerfile.)
FROM golang:1.26 AS build
# ExternalDNS v0.23 (its providers are linked) needs Go 1.27: the go command
# fetches this toolchain from the Go module proxy (hack/go-env.sh).
ENV GOTOOLCHAIN=go1.27.3
WORKDIR /src
# What zonestream --version prints; empty: what the Go toolchain recorded.
ARG VERSION=
# Build tags: externaldns (the default) links every provider of ExternalDNS
# (aws, cloudflare, google, ...); empty: the lean build.
ARG TAGS=externaldns
COPY . .
RUN --mount=type=cache,target=/root/.cache/go-build --mount=type=cache,target=/go/pkg/mod \
    CGO_ENABLED=0 go build -tags="${TAGS}" -trimpath -ldflags="-s -w -X github.com/zonestream/zonestream/stage.version=${VERSION}" -o /out/zonestream ./cmd/zonestream

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/zonestream /zonestream
USER 65532:65532
EXPOSE 7979
ENTRYPOINT ["/zonestream"]
# The image has no shell or curl: the binary asks its own /readyz.
HEALTHCHECK --interval=10s --timeout=3s CMD ["/zonestream", "healthcheck"]
