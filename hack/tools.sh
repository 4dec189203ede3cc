#!/usr/bin/env bash
# Builds the project's tools from the Go module proxy at the versions pinned in
# hack/tools/*/go.mod, caches them outside the clone, and links them into bin/.
#
#   hack/tools.sh NAME...     ensure each tool is built and linked as bin/NAME
#   hack/tools.sh --list      the tools this script knows
#
# The cache lives in ${STRATOS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stratos/tools},
# one folder per tool keyed by its version and the hash of its go.mod and go.sum, so a
# fresh clone reuses what an earlier clone built and a changed pin rebuilds. Builds are
# serialised with a lock so that parallel test processes build each tool once.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${STRATOS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stratos/tools}

export GOTOOLCHAIN=local
export CGO_ENABLED=0
# The checksum database answers 404 for some k8s.io module versions; go.sum in each tools
# module still pins every hash, so skipping the database for these prefixes loses nothing.
export GONOSUMDB=${GONOSUMDB:-k8s.io,sigs.k8s.io}
export GOFLAGS=-mod=readonly

kube_version=v1.37.0
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${kube_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"

# tool -> "module-dir|package|pinned-module|ldflags|minutes"
declare -A tools=(
  [etcd]="etcd|go.etcd.io/etcd/server/v3|go.etcd.io/etcd/server/v3||1"
  [kube-apiserver]="kube|k8s.io/kubernetes/cmd/kube-apiserver|k8s.io/kubernetes|${kube_ldflags}|3"
  [kube-scheduler]="kube|k8s.io/kubernetes/cmd/kube-scheduler|k8s.io/kubernetes|${kube_ldflags}|2"
  [kube-controller-manager]="kube|k8s.io/kubernetes/cmd/kube-controller-manager|k8s.io/kubernetes|${kube_ldflags}|3"
  [kubectl]="kube|k8s.io/kubernetes/cmd/kubectl|k8s.io/kubernetes|${kube_ldflags}|2"
  [controller-gen]="controller-gen|sigs.k8s.io/controller-tools/cmd/controller-gen|sigs.k8s.io/controller-tools||1"
  [staticcheck]="staticcheck|honnef.co/go/tools/cmd/staticcheck|honnef.co/go/tools||1"
  [helm]="helm|helm.sh/helm/v4/cmd/helm|helm.sh/helm/v4|-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.1|2"
)

# pinned_version prints the version go.mod pins for a module.
pinned_version() {
  awk -v m="$2" '{ for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit } }' "$1/go.mod"
}

# moto_version is the AWS emulator the EC2 provider's tests run against. It is a Python
# program, not a Go one: a moto_server on PATH is used as it is (the development and CI
# machines have one); otherwise it is installed with pip into a virtualenv in the cache.
moto_version=5.2.1

ensure_moto() {
  local target
  if target=$(command -v moto_server 2>/dev/null); then
    :
  else
    local venv=$cache/moto-$moto_version
    target=$venv/bin/moto_server
    if [[ ! -x $target ]]; then
      mkdir -p "$cache"
      (
        flock 9
        if [[ ! -x $target ]]; then
          echo "moto_server is not on PATH: installing moto[server]==$moto_version with pip into $venv..." >&2
          python3 -m venv "$venv"
          "$venv/bin/pip" install --quiet "moto[server]==$moto_version"
        fi
      ) 9>"$cache/.lock-moto"
    fi
  fi
  mkdir -p "$root/bin"
  if [[ "$(readlink "$root/bin/moto_server" 2>/dev/null)" != "$target" ]]; then
    ln -sfn "$target" "$root/bin/moto_server"
  fi
}

ensure() {
  local name=$1
  if [[ $name == moto_server ]]; then
    ensure_moto
    return
  fi
  local spec=${tools[$name]:-}
  if [[ -z $spec ]]; then
    echo "hack/tools.sh: unknown tool '$name' (known: ${!tools[*]})" >&2
    return 2
  fi
  local dir pkg module ldflags minutes
  IFS='|' read -r dir pkg module ldflags minutes <<<"$spec"
  local moddir=$root/hack/tools/$dir
  local version hash target
  version=$(pinned_version "$moddir" "$module")
  hash=$(cat "$moddir/go.mod" "$moddir/go.sum" | sha256sum | cut -c1-12)
  target=$cache/$name-$version-$hash/$name

  if [[ ! -x $target ]]; then
    mkdir -p "$cache"
    (
      flock 9
      if [[ ! -x $target ]]; then
        echo "building $name $version from the Go module proxy (first run only, about $minutes min)..." >&2
        local started=$SECONDS tmp
        tmp=$(mktemp -d "$cache/.build-$name.XXXXXX")
        (cd "$moddir" && go build -trimpath -ldflags "$ldflags" -o "$tmp/$name" "$pkg")
        mkdir -p "$(dirname "$target")"
        mv "$tmp/$name" "$target"
        rmdir "$tmp"
        echo "built $name in $((SECONDS - started))s: $target" >&2
      fi
    ) 9>"$cache/.lock-$name"
  fi

  mkdir -p "$root/bin"
  if [[ "$(readlink "$root/bin/$name" 2>/dev/null)" != "$target" ]]; then
    ln -sfn "$target" "$root/bin/$name"
  fi
}

if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${!tools[@]}" moto_server | sort
  exit 0
fi
if [[ $# -eq 0 ]]; then
  echo "usage: hack/tools.sh NAME... | --list" >&2
  exit 2
fi
for name in "$@"; do
  ensure "$name"
done
