# The Stratos operator image: a static binary on distroless, running as a non-root user.
#
#   make image                       docker or podman, tagged $(IMAGE), stamped from git
#   make image-multiarch IMAGE=...   docker buildx, linux/amd64 and linux/arm64, pushed:
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=v0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t IMAGE --push .
#
# The build stage runs hack/build.sh, the script make build runs in CI, so the binary in the
# image is built with the same flags as the one the tests run. .git is not in the build
# context: the version and revision come in as build arguments.

# The Go release go.mod names (go 1.26.0); the toolchain is never switched (GOTOOLCHAIN=local).
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ENV GOTOOLCHAIN=local \
    GONOSUMDB=k8s.io,sigs.k8s.io \
    GOFLAGS=-mod=readonly
WORKDIR /src
# Modules first, in a layer of their own: a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Cross-compiles to the target platform on the build machine's (buildx sets TARGETOS and
# TARGETARCH); hack/build.sh reads them.
ARG TARGETOS TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
RUN --mount=type=cache,target=/root/.cache/go-build \
    DIST=/out TARGETOS=$TARGETOS TARGETARCH=$TARGETARCH VERSION=$VERSION REVISION=$REVISION \
    hack/build.sh stratos

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/stratos-sh/stratos
LABEL org.opencontainers.image.title="stratos" \
      org.opencontainers.image.description="Kubernetes node autoscaler with warm pools of stopped, pre-initialised nodes" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/stratos /stratos
# distroless's nonroot user, by number so that runAsNonRoot can verify it without /etc/passwd.
USER 65532:65532
ENTRYPOINT ["/stratos"]
