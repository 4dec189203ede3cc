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
# for multiple packages"), so the packages are run in sets of distinct names, each set's
# binaries in a folder of its own: the first package of each name in the first set, the
# second in the next, and so on. The first set holds all but ten of them, the longest
# included, and runs four at a time as all of them did before; the ten others (six unit
# packages and four short integration ones, internal/interruption and
# test/integration/interruption, say) run one at a time beside it.
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

# The packages whose tests take longest, named first, longest first: go test starts
# packages in the order given, and ./... alone puts test/ after internal/, so the longest
# ran last, on their own, after the short ones had finished. The four longest take the
# four places first (test/e2e, 510-550 s, throughout); the next ones (50-190 s each) had
# started after the sixty short packages and ran on 2.7 minutes after test/e2e ended.
longest=(./test/e2e ./test/integration/provisioning ./test/integration/warmpool ./test/integration/disruption
  ./internal/cloudprovider/aws ./test/integration/clusterapi ./test/chart ./test/integration/clusterapi_sim
  ./cmd/stratos ./internal/sim/kubelet ./test/integration/nodeclass)

# The packages that have tests, each with its set: 0 for the first of its name.
sets=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "${longest[@]}" ./... |
  awk -F/ 'NF && !seen[$0]++ { print n[$NF]++, $0 }')

# The end-to-end scenarios run at the tests' priority, and every other package at nice 10
# (a ninth of the weight of a process at 0 on a busy core).
# A scenario expects latencies in its own time, which runs faster than the wall clock (2x
# for spot-interruption), and every hop between its processes (a watch event, a pass, a
# status write) waited for a core behind the integration packages' API servers at a load
# of 20 on two cores: spot-interruption's "back within 30 s" took 30.3 and 31.2 s in two
# fresh-clone runs, 23.9 s alone. The other packages wait on conditions with no latency
# to meet, and get the CPU the scenarios leave (about 0.7 of a core): the work is the same,
# only the order in which a busy core takes it changes.
nice_others=(nice -n 10)

# Four test binaries at once (-p), not go test's default of one per core: most of the
# integration tests' time is spent waiting on their clusters' clocks (the cores were idle
# 45% of the phase with two at once, 22% with three, 9% with four; vmstat, 10 s samples).
# test/e2e holds one place throughout, the rest of the first set the other three; the
# other sets, one after the other, one binary at a time, beside them.
flags=("$@")
e2e=$(go list ./test/e2e)
go test "${flags[@]}" -p=1 -o "$binaries/0/" "$e2e" &
scenarios=$!
"${nice_others[@]}" go test "${flags[@]}" -p=3 -o "$binaries/0/" $(awk -v e2e="$e2e" '$1 == 0 && $2 != e2e { print $2 }' <<<"$sets") &
first=$!
(
  rc=0
  for set in $(awk '$1 > 0 { print $1 }' <<<"$sets" | sort -nu); do
    "${nice_others[@]}" go test "${flags[@]}" -p=1 -o "$binaries/$set/" $(awk -v s="$set" '$1 == s { print $2 }' <<<"$sets") || rc=1
  done
  exit $rc
) &
others=$!
failed=0
for job in $scenarios $first $others; do
  wait "$job" || failed=1
done
exit $failed
