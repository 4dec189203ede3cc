#!/usr/bin/env bash
# Fails when the generated files (deep-copy code, CRDs, RBAC, their copies in the Helm
# chart, API reference, and the deep-copy code and CRDs of the simulator's Cluster API
# providers) are not what `make generate` writes from the current API types and markers.
# Works without git: it snapshots the generated files, regenerates, compares and restores
# the snapshot.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

generated=(api/v1beta1/zz_generated.deepcopy.go config/crd/bases config/rbac charts/stratos/files/crds charts/stratos/files/rbac docs/api.md
  internal/sim/clusterapi/simapi/v1alpha1/zz_generated.deepcopy.go internal/sim/clusterapi/simapi/crds)
snapshot=$(mktemp -d)
trap 'rm -rf "$snapshot"' EXIT
for path in "${generated[@]}"; do
  mkdir -p "$snapshot/before/$(dirname "$path")"
  cp -a "$path" "$snapshot/before/$path"
done

make --no-print-directory generate >"$snapshot/generate.log" 2>&1 || {
  cat "$snapshot/generate.log" >&2
  exit 1
}

status=0
for path in "${generated[@]}"; do
  if ! diff -ru "$snapshot/before/$path" "$path" >"$snapshot/diff" 2>&1; then
    echo "generated files are out of date: $path (run 'make generate' and commit the result)" >&2
    head -n 60 "$snapshot/diff" >&2
    status=1
  fi
done
# Leave the tree as it was, so a failing check does not silently fix the checkout.
for path in "${generated[@]}"; do
  rm -rf "$path"
  cp -a "$snapshot/before/$path" "$path"
done
[[ $status -eq 0 ]] && echo "generated files are up to date"
exit $status
