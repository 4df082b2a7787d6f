# Sourced by hack/containers.sh: every image the tests and the compose file
# use, built from binaries and packages on the host (nothing is pulled).

# The Debian packages of the base image: BIND and the tools of the compose
# demo (dig, openssl), etcd for the local kube-apiserver, busybox's wget
# for NATS' healthcheck.
BASE_IMAGE=zonestream-ci/debian:bookworm
BASE_PACKAGES=bind9,bind9-dnsutils,openssl,etcd-server,etcd-client,busybox-static,ca-certificates

# base_image imports a debootstrapped Debian (its tarball cached) unless
# the engine has it.
base_image() {
  $DOCKER image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return
  local tarball="$CACHE/debian-bookworm-${BASE_PACKAGES//,/-}.tar"
  if [ ! -s "$tarball" ]; then
    local mirror root sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
    mirror=${mirror:-http://deb.debian.org/debian}
    root=$(mktemp -d)
    log "debootstrap bookworm ($BASE_PACKAGES) from $mirror"
    $sudo debootstrap --variant=minbase --include="$BASE_PACKAGES" bookworm "$root" "$mirror" >/dev/null
    $sudo rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    $sudo tar -C "$root" -cf "$tarball.tmp" . && $sudo chown "$(id -u)" "$tarball.tmp" && mv "$tarball.tmp" "$tarball"
    $sudo rm -rf "$root"
  fi
  $DOCKER import "$tarball" "$BASE_IMAGE" >/dev/null
}

# build TAG DOCKERFILE CONTEXT [ARGS...]
build() {
  local tag=$1 file=$2 ctx=$3
  shift 3
  $DOCKER build -q -t "$tag" -f "$file" "$@" "$ctx" >/dev/null
}

build_images() {
  base_image
  local ctx version
  ctx=$(mktemp -d)
  version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
  # zonestream: one static binary, every stage. The tests need only the
  # lean build (zonestream:latest-lean, tagged latest too); with
  # ZS_IMAGE_EXTERNALDNS=1, latest is the image users pull (every
  # provider of ExternalDNS, the Dockerfile's default; a few minutes more).
  CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X github.com/zonestream/zonestream/stage.version=$version" -o "$ctx/zonestream" ./cmd/zonestream
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  mkdir -m 1777 "$ctx/tmp"
  build zonestream:latest-lean hack/containers/zonestream.Dockerfile "$ctx"
  $DOCKER tag zonestream:latest-lean "zonestream:$version-lean"
  if [ "${ZS_IMAGE_EXTERNALDNS:-}" = 1 ]; then
    CGO_ENABLED=0 go build -tags=externaldns -trimpath -ldflags="-s -w -X github.com/zonestream/zonestream/stage.version=$version" -o "$ctx/zonestream" ./cmd/zonestream
    build zonestream:latest hack/containers/zonestream.Dockerfile "$ctx"
  else
    $DOCKER tag zonestream:latest-lean zonestream:latest
  fi
  $DOCKER tag zonestream:latest "zonestream:$version"
  # NATS under the official tag docker-compose.yml and the tests name.
  rm -rf "${ctx:?}"/*
  cp "$TOOLS/nats-server" "$ctx/nats-server"
  $DOCKER run --rm "$BASE_IMAGE" cat /bin/busybox >"$ctx/busybox"
  chmod +x "$ctx/busybox"
  mkdir -p "$ctx/data"
  build nats:2.15-alpine hack/containers/nats.Dockerfile "$ctx"
  # The local kube-apiserver of deploy/compose/local-kube.yml.
  rm -rf "${ctx:?}"/*
  cp "$KUBEBUILDER_ASSETS/kube-apiserver" "$ctx/"
  build registry.k8s.io/kube-apiserver:v1.32.13 hack/containers/kube-apiserver.Dockerfile "$ctx"
  build registry.k8s.io/etcd:3.5.21-0 hack/containers/etcd.Dockerfile "$ctx" --build-arg "BASE=$BASE_IMAGE"
  rm -rf "$ctx"
  # BIND from its own Dockerfile, on a base that has its packages already.
  build zonestream-bind:latest deploy/compose/bind/Dockerfile deploy/compose/bind --build-arg "BASE=$BASE_IMAGE"
}
