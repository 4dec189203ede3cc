#!/usr/bin/env bash
# Builds the release binaries: static (no cgo), without local paths (-trimpath), stripped,
# and stamped with the version and source revision. make build, the container image's
# build stage and the end-to-end test all run this script, so the binary CI tests is built
# the way the image's is.
#
#   hack/build.sh [NAME...]    build cmd/NAME for each NAME (default: stratos stratos-sim)
#
# Environment:
#   DIST                 output folder (default: dist/ in the repository)
#   VERSION, REVISION    stamped into internal/version; default from git, else "dev" and
#                        "unknown" (the image's build stage has no .git and passes them in)
#   TARGETOS, TARGETARCH the platform to build for, as docker buildx names it; GOOS and
#                        GOARCH are honoured when these are unset
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export CGO_ENABLED=0
export GONOSUMDB=${GONOSUMDB:-k8s.io,sigs.k8s.io}
if [[ -n ${TARGETOS:-} ]]; then export GOOS=$TARGETOS; fi
if [[ -n ${TARGETARCH:-} ]]; then export GOARCH=$TARGETARCH; fi

dist=${DIST:-$root/dist}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
revision=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(stratos stratos-sim)
packages=()
for name in "${names[@]}"; do
  [[ -d cmd/$name ]] || { echo "hack/build.sh: no command cmd/$name" >&2; exit 2; }
  packages+=("./cmd/$name")
done

pkg=github.com/stratos-sh/stratos/internal/version
mkdir -p "$dist"
# One go build for every binary: shared packages compile once and the links overlap.
# -buildvcs=false: the revision is stamped explicitly, so a build from a tarball or a
# container context without .git is the same binary as one from a clone.
go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X ${pkg}.Version=${version} -X ${pkg}.Revision=${revision}" \
  -o "$dist/" "${packages[@]}"
echo "built ${names[*]} ${version} (${revision}) for $(go env GOOS)/$(go env GOARCH) into $dist" >&2
