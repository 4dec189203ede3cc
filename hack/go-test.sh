#!/usr/bin/env bash
# go test over the whole module, as make test runs it, with the linked test binaries kept
# between runs: hack/go-test.sh [go test flags]
#
# The linker took 132 of make test's 1,374 core-seconds (perf, one fresh-clone run): go
# test links every test binary again on every run, though the build cache holds each
# package compiled. Given -o DIR/, go test writes each binary to DIR and, in a later run,
# finds it up to date by its build ID (which -trimpath keeps free of the clone's path) and
# runs it without linking: an unchanged package costs no link, a changed one and those that
# import it are linked again.
#
# -o DIR/ takes packages of distinct names only ("cannot write test binary disruption.test
# for multiple packages"), so each stream below runs its packages in sets of distinct
# names, one go test per set, one set after the other: internal/controllers/disruption and
# test/integration/disruption, say, are in different sets.
#
# The binaries are kept in ${STRATOS_TEST_BINARIES:-${XDG_CACHE_HOME:-$HOME/.cache}/stratos/test-binaries}.
# A run that finds them up to date runs them by that path, so a run of another tree could
# replace one between the check and the run: a run that finds the folder in use by another
# links its own into a folder of its own, as go test does without -o.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

binaries=${STRATOS_TEST_BINARIES:-${XDG_CACHE_HOME:-$HOME/.cache}/stratos/test-binaries}
mkdir -p "$binaries"
exec 9>"$binaries/.lock"
if ! flock -n 9; then
  echo "go-test: $binaries is in use by another run; linking this run's test binaries apart"
  binaries=$(mktemp -d)
  trap 'rm -rf "$binaries"' EXIT
fi

# The test/ packages whose tests take longest, named first, longest first: go test starts
# packages in the order given, and ./test/... alone puts them in alphabetical order, so the
# longest could start last and run on alone. The four longest take the four places first
# (test/e2e, 510-550 s, throughout); the next ones (50-80 s each) follow as the short ones
# would.
longest=(./test/e2e ./test/integration/provisioning ./test/integration/warmpool ./test/integration/disruption
  ./test/integration/clusterapi ./test/chart ./test/integration/clusterapi_sim ./test/integration/nodeclass)

# in_sets STREAM P PACKAGE...: go test with -p=P over the packages that have tests, in
# sets of distinct names (the first of each name in the first set, and so on), one set
# after the other, each set's binaries in a folder of its own; fails if any set failed.
in_sets() {
  local stream=$1 p=$2 rc=0 set
  shift 2
  local sets
  sets=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "$@" |
    awk -F/ 'NF && !seen[$0]++ { print n[$NF]++, $0 }')
  for set in $(cut -d' ' -f1 <<<"$sets" | sort -nu); do
    go test "${flags[@]}" -p="$p" -o "$binaries/$stream-$set/" $(awk -v s="$set" '$1 == s { print $2 }' <<<"$sets") || rc=1
  done
  return $rc
}

flags=("$@")
# Four test binaries at once under test/ (-p), not go test's default of one per core: most
# of their time is spent waiting on their clusters' clocks (the cores were idle 45% of the
# phase with two at once, 22% with three, 9% with four; vmstat, 10 s samples). The rest, one at a time beside them: the longest of them,
# internal/cloudprovider/aws and internal/scheduling, take 2-3 minutes each, well inside
# test/e2e's time, and the sixty others a few seconds each.
in_sets test 4 "${longest[@]}" ./test/... &
tests=$!
in_sets rest 1 $(go list ./... | grep -v /test/) &
rest=$!
failed=0
wait $tests || failed=1
wait $rest || failed=1
exit $failed
