# zonestream: one image, every stage (`zonestream collector|dedup|planner|applier`)
# and the all-in-one (`zonestream`).
#   docker build -t zonestream:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.cache/go-build --mount=type=cache,target=/go/pkg/mod \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/zonestream ./cmd/zonestream

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/zonestream /zonestream
EXPOSE 7979
ENTRYPOINT ["/zonestream"]
