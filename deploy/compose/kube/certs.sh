#!/bin/sh
# Credentials for the local kube-apiserver of local-kube.yml, made once
# into the kube volume: a serving certificate for the names containers and
# the host use, the service-account signing key, an admin token, and two
# kubeconfigs, one for containers (https://kube-apiserver:6443) and one for
# the host (https://127.0.0.1:6443, written to ./.local-kube/kubeconfig).
set -eu
dir=/kube
if [ ! -s "$dir/kubeconfig" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=kube-apiserver \
    -addext "subjectAltName=DNS:kube-apiserver,DNS:localhost,IP:127.0.0.1" \
    -keyout "$dir/apiserver.key" -out "$dir/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  token=$(openssl rand -hex 24)
  echo "$token,admin,admin,system:masters" > "$dir/tokens.csv"
  ca=$(base64 -w0 < "$dir/apiserver.crt")
  for where in "kubeconfig https://kube-apiserver:6443" "host.kubeconfig https://127.0.0.1:6443"; do
    set -- $where
    cat > "$dir/$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "$2", certificate-authority-data: "$ca"}
users:
- name: admin
  user: {token: "$token"}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
KUBECONFIG
  done
  # The collector runs as 65532; the apiserver's keys stay readable to it
  # as well: this cluster is a throwaway on your machine.
  chmod 0444 "$dir"/*
fi
if [ -d /host ]; then cp "$dir/host.kubeconfig" /host/kubeconfig; fi
