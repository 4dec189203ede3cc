package e2e

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
)

// distDir holds the binaries the tests run, built once for all of them (built).
var distDir string

// scenariosAtOnce is how many scenarios run side by side unless go test's -parallel says
// otherwise. A scenario mostly waits on its simulated cloud's clock while its control
// plane idles (quickstart at time scale 5: 12 s of CPU in 65 s), so the package's time is
// the sum of its scenarios' wall times over this: three at a time took 671 s, four 574 s
// (make test, -p=4). Not more: the scenarios' latency expectations are in scenario time,
// so CPU contention shows in them (four at once failed spot-interruption's "back within
// 30 s" on a machine at load 50 from other work), and with four the cores are already
// busy 91% of make test's go test phase.
const scenariosAtOnce = 4

func TestMain(m *testing.M) {
	flag.Parse()
	atOnce := scenariosAtOnce
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			atOnce, _ = strconv.Atoi(f.Value.String())
		}
	})
	// The scenarios take turns (turns_test.go), at most atOnce at a time; go test must
	// release them all to the line, or the one whose turn it is might not be among those
	// it released.
	scenarioTurns = newTurns(max(atOnce, 1))
	if err := flag.Set("test.parallel", fmt.Sprint(math.MaxInt32)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "stratos-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	distDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
