package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// distDir holds the binaries the tests run, built once for all of them (built).
var distDir string

// scenariosAtOnce is how many scenarios run side by side unless go test's -parallel says
// otherwise. A scenario mostly waits on its simulated cloud's clock while its control
// plane idles: two at a time (go test's default on two cores) took the package 18
// minutes. Three, not more: the scenarios' latency expectations are in scenario time, so
// CPU contention shows in them (at a machine load of 50, four at once failed
// spot-interruption's "back within 30 s"); and make test starts this package first, so
// it need only end with the other packages, which run two at a time beside it (-p=3).
const scenariosAtOnce = 3

func TestMain(m *testing.M) {
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		if err := flag.Set("test.parallel", fmt.Sprint(scenariosAtOnce)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
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
