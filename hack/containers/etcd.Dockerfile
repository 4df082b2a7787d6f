# CI's stand-in for registry.k8s.io/etcd: Debian's etcd from the base image.
ARG BASE
FROM ${BASE}
RUN mkdir -p /var/lib/etcd
