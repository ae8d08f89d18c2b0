# syntax=docker/dockerfile:1
# Build a static edge binary, then ship it alone in a distroless image that
# runs as a non-root user.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOEXPERIMENT=simd go build -trimpath -ldflags="-s -w" -o /out/edge ./cmd/edge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/edge /edge
USER nonroot:nonroot
EXPOSE 8080
ENV EDGE_LISTEN=0.0.0.0:8080
# The daily exports: mount a volume here (shared by the fleet, or one an edge).
ENV EDGE_EXPORTS_DIR=/home/nonroot/exports
ENTRYPOINT ["/edge"]
CMD ["serve"]
