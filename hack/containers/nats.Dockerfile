# CI's stand-in for the official nats:*-alpine image docker-compose.yml
# names: a nats-server built on the host, and busybox's wget for the
# compose healthcheck. Same entrypoint, so `command: ["--jetstream", ...]`
# means the same thing in both.
FROM scratch
COPY nats-server /usr/local/bin/nats-server
COPY busybox /bin/wget
COPY --chown=65532:65532 data/ /data/
ENV PATH=/usr/local/bin:/bin
USER 65532:65532
EXPOSE 4222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
