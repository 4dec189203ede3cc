// Command stratos-sim runs Stratos in a simulated cluster on loopback: a real control
// plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager), the fake cloud
// with its kubelet simulator, and the stratos binary, driven by a scenario file. See
// docs/simulator.md.
//
//	stratos-sim run SCENARIO [--json FILE] [--plot FILE] [--time-scale X] [--cloud fake|aws|clusterapi]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/runner"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

const usage = `stratos-sim runs Stratos in a simulated cluster on loopback.

Usage:
  stratos-sim run SCENARIO [flags]

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 when the scenario passed, 1 when it failed or could
// not run, 2 for a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stratos-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonPath := fs.String("json", "", "write the JSON report to this file")
	plotPath := fs.String("plot", "", "write an SVG plot of pods and nodes over time and the latency CDF to this file")
	timeScale := fs.Float64("time-scale", 0, "run this many times faster than real time (default: the scenario's timeScale)")
	cloud := fs.String("cloud", "", "the cloud to run against: fake, aws (the EC2 provider against moto, an EC2 emulator), or clusterapi (the Cluster API provider against CAPI's core controllers, the simulator's infrastructure provider booting the fake cloud's machines) (default: the scenario's cloud, fake unless it says)")
	toolsDir := fs.String("tools-dir", envOr("STRATOS_TOOLS_DIR", "bin"), "folder with etcd, kube-apiserver, kube-scheduler and kube-controller-manager, and on clusterapi capi-manager and capi-config/ (built by hack/tools.sh)")
	stratos := fs.String("stratos", "", "the stratos binary to run (default: stratos next to this binary)")
	crds := fs.String("crds", "config/crd/bases", "folder with the Stratos CRDs")
	workDir := fs.String("work-dir", "", "folder for kubeconfigs and logs (default: .work/sim/SCENARIO)")
	quiet := fs.Bool("quiet", false, "print no live progress, only the table")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile of the simulator (control plane excepted) to this file, for go tool pprof")
	memProfile := fs.String("mem-profile", "", "write a heap profile of the simulator at the end of the run to this file, for go tool pprof")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "run" {
		fs.Usage()
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	// Flags may follow the scenario, as in the usage line.
	rest := fs.Args()
	if len(rest) < 1 {
		fmt.Fprintln(stderr, "stratos-sim run: a scenario file is required")
		return 2
	}
	path := rest[0]
	if err := fs.Parse(rest[1:]); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "stratos-sim run: one scenario file, flags before or after it")
		return 2
	}

	s, err := scenario.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "stratos-sim:", err)
		return 1
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if *timeScale > 0 {
		s.TimeScale = *timeScale
	}
	if *cloud != "" {
		// What the scenario asks may not be there on the other cloud: check again.
		s.Cloud = *cloud
		if err := s.Validate(); err != nil {
			fmt.Fprintf(stderr, "stratos-sim: %s with --cloud=%s: %v\n", path, *cloud, err)
			return 1
		}
	}
	if *stratos == "" {
		*stratos = siblingBinary("stratos")
	}
	if *workDir == "" {
		*workDir = filepath.Join(".work", "sim", s.Name)
	}
	var progress io.Writer = stdout
	if *quiet {
		progress = nil
	}

	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		fmt.Fprintln(stderr, "stratos-sim:", err)
		return 1
	}
	defer func() {
		if err := stopProfiles(); err != nil {
			fmt.Fprintln(stderr, "stratos-sim:", err)
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := runner.Run(ctx, runner.Options{
		Scenario: s, ToolsDir: *toolsDir, OperatorBinary: *stratos, CRDDir: *crds, WorkDir: *workDir, Progress: progress,
	})
	if rep == nil {
		fmt.Fprintln(stderr, "stratos-sim:", err)
		return 1
	}
	if err != nil {
		rep.OK = false
		rep.Failures = append(rep.Failures, err.Error())
	}
	fmt.Fprintln(stdout)
	if werr := errors.Join(report.WriteTable(stdout, rep), writeIf(*jsonPath, rep.WriteJSON), writeIf(*plotPath, func(p string) error { return report.WritePlot(p, rep) })); werr != nil {
		fmt.Fprintln(stderr, "stratos-sim:", werr)
		return 1
	}
	if !rep.OK {
		return 1
	}
	return 0
}

func writeIf(path string, write func(string) error) error {
	if path == "" {
		return nil
	}
	return write(path)
}

// siblingBinary is a binary next to this one, as make build puts stratos and
// stratos-sim side by side in dist/.
func siblingBinary(name string) string {
	self, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(self), name)
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
