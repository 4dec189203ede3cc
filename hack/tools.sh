#!/usr/bin/env bash
# Builds the project's tools from the Go module proxy at the versions pinned in
# hack/tools/*/go.mod, caches them outside the clone, and links them into bin/.
#
#   hack/tools.sh NAME...     ensure each tool is built and linked as bin/NAME
#   hack/tools.sh --fetch NAME...  only download the modules they need (no build)
#   hack/tools.sh --list      the tools this script knows
#
# The cache lives in ${STRATOS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stratos/tools},
# one folder per group of tools (one module under hack/tools/) keyed by its version and the
# hash of its go.mod and go.sum, so a fresh clone reuses what an earlier clone built and a
# changed pin rebuilds. A group builds under a lock so that parallel test processes build
# it once; the groups asked for in one call build side by side.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${STRATOS_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stratos/tools}

export GOTOOLCHAIN=local
export CGO_ENABLED=0
# The checksum database answers 404 for some k8s.io module versions; go.sum in each tools
# module still pins every hash, so skipping the database for these prefixes loses nothing.
export GONOSUMDB=${GONOSUMDB:-k8s.io,sigs.k8s.io}
export GOFLAGS=-mod=readonly

# Tools come in groups, one per module under hack/tools/: a group's tools are built by one
# `go build` invocation, so the packages they share compile once and their links overlap
# (the kube group's four binaries share most of Kubernetes), and are cached in one folder.
#
# tool -> "group|package"
declare -A tools=(
  [etcd]="etcd|go.etcd.io/etcd/server/v3"
  [kube-apiserver]="kube|k8s.io/kubernetes/cmd/kube-apiserver"
  [kube-scheduler]="kube|k8s.io/kubernetes/cmd/kube-scheduler"
  [kube-controller-manager]="kube|k8s.io/kubernetes/cmd/kube-controller-manager"
  [kubectl]="kube|k8s.io/kubernetes/cmd/kubectl"
  [controller-gen]="controller-gen|sigs.k8s.io/controller-tools/cmd/controller-gen"
  [staticcheck]="staticcheck|honnef.co/go/tools/cmd/staticcheck"
  [helm]="helm|helm.sh/helm/v4/cmd/helm"
  [capi-manager]="capi|sigs.k8s.io/cluster-api/core"
)

# group -> "pinned-module|minutes": the module whose version names the cache folder, and
# how long a first build takes on 2 cores, download and compile, as measured; printed so
# that a first run says what it is waiting for. kube: 6.2 min from empty Go caches, 4.6 min
# after the project's build has compiled the client-go and apimachinery packages they share.
declare -A groups=(
  [etcd]="go.etcd.io/etcd/server/v3|1"
  [kube]="k8s.io/kubernetes|5-6"
  [controller-gen]="sigs.k8s.io/controller-tools|1"
  [staticcheck]="honnef.co/go/tools|1"
  [helm]="helm.sh/helm/v4|2"
  [capi]="sigs.k8s.io/cluster-api|3-4"
)

# group_ldflags prints the linker flags of a group's build at its pinned version, which
# the binaries report as their own (kube-apiserver's version check, helm version).
group_ldflags() {
  local group=$1 version=$2
  case $group in
    kube)
      local minor=${version#v1.}
      minor=${minor%%.*}
      echo "-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
      ;;
    helm) echo "-s -w -X helm.sh/helm/v4/internal/version.version=${version}" ;;
    capi) echo "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=${version}" ;;
    *) echo "-s -w" ;;
  esac
}

# group_members prints the tools of a group, in a stable order.
group_members() {
  local name
  for name in "${!tools[@]}"; do
    [[ ${tools[$name]%%|*} == "$1" ]] && echo "$name"
  done | sort
}

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

# group_dir prints the cache folder of a group: its version and the hash of its go.mod and
# go.sum, so that a changed pin builds anew.
group_dir() {
  local group=$1 moddir=$root/hack/tools/$1 module version hash
  module=${groups[$group]%%|*}
  version=$(pinned_version "$moddir" "$module")
  hash=$(cat "$moddir/go.mod" "$moddir/go.sum" | sha256sum | cut -c1-12)
  echo "$cache/$group-$version-$hash"
}

# group_extras copies into a group's cache folder what its tools need besides the
# binaries: for capi, the release's CRDs and webhook configuration (capi-config/), which
# the harness installs before it starts the manager, from the module the build used.
group_extras() {
  local group=$1 moddir=$2 tmp=$3 dir
  case $group in
    capi)
      dir=$(cd "$moddir" && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
      mkdir -p "$tmp/capi-config/crd" "$tmp/capi-config/webhook"
      cp "$dir"/core/config/crd/bases/*.yaml "$tmp/capi-config/crd/"
      cp "$dir/core/config/webhook/manifests.yaml" "$tmp/capi-config/webhook/"
      chmod -R u+w "$tmp/capi-config"
      ;;
  esac
}

# group_built succeeds when every tool of a group is in its cache folder.
group_built() {
  local dir=$1 name
  shift
  for name in "$@"; do
    [[ -x $dir/$name ]] || return 1
  done
}

# build_group builds every tool of a group with one go build into a temporary folder and
# renames it into place, under a lock, so that a folder in the cache is always complete
# and parallel callers build it once.
build_group() {
  local group=$1 dir
  dir=$(group_dir "$group")
  local members
  mapfile -t members < <(group_members "$group")
  group_built "$dir" "${members[@]}" && return 0
  mkdir -p "$cache"
  (
    flock 9
    group_built "$dir" "${members[@]}" && exit 0
    local moddir=$root/hack/tools/$group module minutes version packages=() name
    IFS='|' read -r module minutes <<<"${groups[$group]}"
    version=$(pinned_version "$moddir" "$module")
    for name in "${members[@]}"; do
      packages+=("${tools[$name]#*|}")
    done
    echo "building ${members[*]} $version from the Go module proxy (first run only, about $minutes min on 2 cores)..." >&2
    local started=$SECONDS tmp
    tmp=$(mktemp -d "$cache/.build-$group.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    if [[ ${#members[@]} -eq 1 ]]; then
      (cd "$moddir" && go build -trimpath -ldflags "$(group_ldflags "$group" "$version")" -o "$tmp/${members[0]}" "${packages[0]}")
    else
      # With several packages, -o names a folder and each binary is named after its package.
      (cd "$moddir" && go build -trimpath -ldflags "$(group_ldflags "$group" "$version")" -o "$tmp/" "${packages[@]}")
    fi
    group_extras "$group" "$moddir" "$tmp"
    group_built "$tmp" "${members[@]}" || {
      echo "hack/tools.sh: go build did not write every tool of $group (${members[*]}) into $tmp" >&2
      exit 1
    }
    rm -rf "$dir"
    mv "$tmp" "$dir"
    chmod 755 "$dir"
    echo "built ${members[*]} in $((SECONDS - started))s: $dir" >&2
  ) 9>"$cache/.lock-$group"
}

# link_tool links bin/NAME to the tool in its group's cache folder.
link_tool() {
  local name=$1 target
  target=$(group_dir "${tools[$name]%%|*}")/$name
  mkdir -p "$root/bin"
  if [[ "$(readlink "$root/bin/$name" 2>/dev/null)" != "$target" ]]; then
    ln -sfn "$target" "$root/bin/$name"
  fi
  if [[ $name == capi-manager && "$(readlink "$root/bin/capi-config" 2>/dev/null)" != "${target%/*}/capi-config" ]]; then
    ln -sfn "${target%/*}/capi-config" "$root/bin/capi-config"
  fi
}

# fetch_group downloads the modules a group's tools import, without building: the network
# part of a first build, which can run while the CPU is busy with something else.
fetch_group() {
  local group=$1 members packages=() name
  mapfile -t members < <(group_members "$group")
  group_built "$(group_dir "$group")" "${members[@]}" && return 0
  for name in "${members[@]}"; do
    packages+=("${tools[$name]#*|}")
  done
  echo "downloading the modules of ${members[*]}..." >&2
  (cd "$root/hack/tools/$group" && go list -deps "${packages[@]}" >/dev/null)
}

# each_group runs a function for every group, side by side when there are several.
each_group() {
  local fn=$1 pids=() failed=0 group pid
  shift
  if [[ $# -eq 1 ]]; then
    "$fn" "$1"
    return
  fi
  for group in "$@"; do
    "$fn" "$group" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
  done
  return $failed
}

mode=build
case ${1:-} in
  --list)
    printf '%s\n' "${!tools[@]}" moto_server | sort
    exit 0
    ;;
  --fetch)
    mode=fetch
    shift
    ;;
esac
if [[ $# -eq 0 ]]; then
  echo "usage: hack/tools.sh [--fetch] NAME... | --list" >&2
  exit 2
fi

wanted_groups=()
for name in "$@"; do
  if [[ $name == moto_server ]]; then
    continue
  fi
  if [[ -z ${tools[$name]:-} ]]; then
    echo "hack/tools.sh: unknown tool '$name' (known: $(printf '%s\n' "${!tools[@]}" moto_server | sort | xargs))" >&2
    exit 2
  fi
  group=${tools[$name]%%|*}
  [[ " ${wanted_groups[*]} " == *" $group "* ]] || wanted_groups+=("$group")
done

if [[ $mode == fetch ]]; then
  [[ ${#wanted_groups[@]} -eq 0 ]] || each_group fetch_group "${wanted_groups[@]}"
  exit 0
fi

# Groups build side by side: one group's module downloads and single-threaded links fill
# the time another spends compiling.
[[ ${#wanted_groups[@]} -eq 0 ]] || each_group build_group "${wanted_groups[@]}"

for name in "$@"; do
  if [[ $name == moto_server ]]; then
    ensure_moto
  else
    link_tool "$name"
  fi
done
