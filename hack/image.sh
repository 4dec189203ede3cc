#!/usr/bin/env bash
# Builds the container image from the Dockerfile with docker or podman, whichever is on PATH
# and answers (docker's CLI without a running daemon does not count).
#
#   hack/image.sh IMAGE VERSION REVISION [PLATFORM]
#
# CONTAINER_ENGINE names the engine to use instead (any with a docker-compatible build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=$1 version=$2 revision=$3 platform=${4:-}

engine=${CONTAINER_ENGINE:-}
if [[ -z $engine ]]; then
  found=()
  for candidate in docker podman; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    found+=("$candidate")
    if "$candidate" info >/dev/null 2>&1; then
      engine=$candidate
      break
    fi
  done
  if [[ -z $engine ]]; then
    if [[ ${#found[@]} -eq 0 ]]; then
      echo "make image: no container engine: neither docker nor podman is on PATH." >&2
    else
      echo "make image: no container engine answers: ${found[*]} on PATH, but '${found[0]} info' fails (is its daemon or service running?)." >&2
    fi
    echo "Install or start docker or podman, or set CONTAINER_ENGINE. Without one, make build runs the image's build stage (hack/build.sh) and proves it." >&2
    exit 1
  fi
fi

args=(build --build-arg "VERSION=$version" --build-arg "REVISION=$revision" -t "$image")
[[ -z $platform ]] || args+=(--platform "$platform")
echo "$engine ${args[*]} $root" >&2
"$engine" "${args[@]}" "$root"
