# CI's stand-in for registry.k8s.io/kube-apiserver, from the binary
# hack/kube-assets.sh builds.
FROM scratch
COPY kube-apiserver /usr/local/bin/kube-apiserver
ENV PATH=/usr/local/bin
ENTRYPOINT []
