# zonestream: one image, every stage (`zonestream collector|dedup|planner|applier`)
# and the all-in-one (`zonestream`). Static, non-root, nothing but the binary.
# At the repository's root because it builds from all of it (every module of go.work).
#   docker build --build-arg VERSION=0.1.0 -t zonestream:0.1.0 -t zonestream:latest .
# (CI builds the same image from a binary built on the host:
# hack/containers/zonestream.Dockerfile.)
FROM golang:1.26 AS build
WORKDIR /src
# What zonestream --version prints; empty: what the Go toolchain recorded.
ARG VERSION=
# Build tags: externaldns links every provider of ExternalDNS (aws,
# cloudflare, google, ...), e.g. for ExternalDNS' Helm chart with
# provider aws:  docker build --build-arg TAGS=externaldns -t zonestream:0.1.0-externaldns .
ARG TAGS=
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
