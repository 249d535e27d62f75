# Caduceus images, built from the repository root:
#
#   docker build -t caduceus .                        # web tier (and runner without tools needing a shell)
#   docker build -t caduceus-runner --target runner .  # runner with /bin/sh, git and the usual tools
#
# The binary is static (pure-Go SQLite, no cgo) and identical in both.
# docs/DEPLOY.md says how to run them; deploy/deploy_test.go checks that
# the build command below yields a static binary.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first: a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/caduceus ./cmd/caduceus
# Empty directories owned by the image's user: a named volume mounted
# here starts with this owner.
RUN mkdir -p /out/var/lib/caduceus /out/workspace

# A runner executes the agent's commands (run_command uses /bin/sh), so
# its image has a shell and the tools agents commonly reach for.
FROM debian:bookworm-slim AS runner
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates git curl ripgrep \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 65532 --user-group --home-dir /home/caduceus --create-home caduceus
COPY --from=build /out/caduceus /usr/local/bin/caduceus
COPY --from=build --chown=65532:65532 /out/var/lib/caduceus /var/lib/caduceus
COPY --from=build --chown=65532:65532 /out/workspace /workspace
ENV CADUCEUS_DATA_DIR=/var/lib/caduceus CADUCEUS_WORKSPACE=/workspace
VOLUME ["/var/lib/caduceus"]
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/caduceus"]
CMD ["runner"]

# The default image: the static binary, CA certificates and a non-root
# user (distroless "nonroot", uid 65532), nothing else: no shell.
FROM gcr.io/distroless/static-debian12:nonroot AS web
COPY --from=build /out/caduceus /usr/local/bin/caduceus
COPY --from=build --chown=65532:65532 /out/var/lib/caduceus /var/lib/caduceus
COPY --from=build --chown=65532:65532 /out/workspace /workspace
# Listening beyond loopback: the server refuses to start without
# CADUCEUS_TOKEN, which must be given at run time.
ENV CADUCEUS_DATA_DIR=/var/lib/caduceus CADUCEUS_WORKSPACE=/workspace CADUCEUS_ADDR=0.0.0.0:7420
VOLUME ["/var/lib/caduceus"]
EXPOSE 7420
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/caduceus"]
CMD ["serve"]
