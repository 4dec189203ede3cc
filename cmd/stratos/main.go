// Command stratos is the Stratos operator: a Kubernetes node autoscaler that keeps warm
// pools of stopped nodes and starts them when pods are pending. Run it with --help for
// its flags; docs/operations.md explains how to run it. Two subcommands help its users:
// "stratos migrate" turns Karpenter objects into Stratos ones (docs/migrating.md), and
// "stratos explain pod" tells why a pod waits or how it got its node
// (docs/troubleshooting.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	// Budgets' and windows' time zones must resolve on a minimal image without
	// /usr/share/zoneinfo.
	_ "time/tzdata"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/internal/operator"
	"github.com/stratos-sh/stratos/internal/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, so its exit codes are plain to see: 0 done, 1 failed,
// 2 bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "migrate":
			return runMigrate(args[1:], stdout, stderr)
		case "explain":
			return runExplain(args[1:], stdout, stderr)
		}
	}
	opts, err := operator.Parse(args, os.LookupEnv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		operator.PrintUsage(stdout, operator.NewFlagSet(&operator.Options{}))
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "stratos: %v\nRun 'stratos --help' for the flags.\n", err)
		return 2
	case opts.ShowVersion:
		fmt.Fprintln(stdout, version.Get())
		return 0
	}

	logger, err := operator.NewLogger(stderr, opts)
	if err != nil {
		fmt.Fprintf(stderr, "stratos: %v\n", err)
		return 2
	}
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	log := logger.WithName("setup")

	cfg, err := operator.RESTConfig(opts)
	if err != nil {
		log.Error(err, "cannot reach the API server")
		return 1
	}
	// The signal handler cancels the context on SIGTERM or SIGINT; a second signal exits at once.
	ctx := ctrl.SetupSignalHandler()
	op, err := operator.New(ctx, opts, cfg, logger)
	if err != nil {
		log.Error(err, "cannot set up the operator")
		return 1
	}
	info := version.Get()
	log.Info("starting", "version", info.Version, "revision", info.Revision, "cluster", opts.ClusterName, "cloudProvider", opts.CloudProvider, "leaderElection", opts.LeaderElect)
	if err := op.Start(ctx); err != nil {
		log.Error(err, "the operator stopped with an error")
		return 1
	}
	log.Info("stopped")
	return 0
}
