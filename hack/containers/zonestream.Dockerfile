# CI's zonestream image: the binary built on the host (CGO_ENABLED=0), no
# registry, no compiler in the image. Users build the repository's
# Dockerfile, which makes the same image from source.
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY zonestream /zonestream
# A writable /tmp, as distroless has: the binary's demo (envtest) touches
# it when it starts.
COPY --chown=65532:65532 tmp/ /tmp/
USER 65532:65532
EXPOSE 7979
ENTRYPOINT ["/zonestream"]
HEALTHCHECK --interval=2s --timeout=3s --retries=30 CMD ["/zonestream", "healthcheck"]
