#!/usr/bin/env bash
# Copies the generated CRDs and RBAC roles into the Helm chart (charts/stratos/files), which
# renders them: a chart may only read files inside itself. Run by `make generate`;
# hack/verify-generated.sh fails when the copies drift.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
files=$root/charts/stratos/files

rm -rf "$files/crds" "$files/rbac"
mkdir -p "$files/crds" "$files/rbac"
cp "$root"/config/crd/bases/*.yaml "$files/crds/"
cp "$root/config/rbac/role.yaml" "$files/rbac/operator.yaml"
cp "$root/config/rbac/fake-kubelets/role.yaml" "$files/rbac/fake-kubelets.yaml"
cp "$root/config/rbac/clusterapi/role.yaml" "$files/rbac/clusterapi.yaml"
