# Sourced by hack/containers.sh: the Docker engine and compose.

# install_packages installs Debian's engine, compose v1 (docker-compose),
# debootstrap and curl (the compose check asks the portal) when missing.
install_packages() {
  local need=()
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
  command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
  command -v curl >/dev/null 2>&1 || need+=(curl)
  [ ${#need[@]} -eq 0 ] && return
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  log "installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# start_engine uses a running engine, else starts dockerd in the background
# (no systemd here) and stops it, by its PID, when the script exits.
start_engine() {
  # Debian's client (20.10) builds without buildx; the newer one may not.
  DOCKER=docker
  [ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
  export DOCKER DOCKER_BUILDKIT=0
  if $DOCKER info >/dev/null 2>&1; then return; fi
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  ENGINE_DIR=$(mktemp -d)
  log "starting dockerd (log: $ENGINE_DIR/dockerd.log)"
  $sudo dockerd >"$ENGINE_DIR/dockerd.log" 2>&1 &
  ENGINE_PID=$!
  trap stop_engine EXIT
  local i
  for i in $(seq 1 120); do
    $DOCKER info >/dev/null 2>&1 && return
    kill -0 "$ENGINE_PID" 2>/dev/null || break
    sleep 0.5
  done
  tail -n 20 "$ENGINE_DIR/dockerd.log" >&2
  log "dockerd did not come up"
  exit 1
}

stop_engine() {
  [ -n "${ENGINE_PID:-}" ] || return 0
  log "stopping dockerd ($ENGINE_PID)"
  kill "$ENGINE_PID" 2>/dev/null || true
  local i
  for i in $(seq 1 60); do kill -0 "$ENGINE_PID" 2>/dev/null || return 0; sleep 0.5; done
  kill -9 "$ENGINE_PID" 2>/dev/null || true
}
