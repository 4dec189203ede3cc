// Command apiserver starts the test harness's etcd and kube-apiserver on loopback with
// the Stratos CRDs installed, writes a kubeconfig, and optionally runs the operator
// against it with the fake cloud. It runs until interrupted. `make dev` and
// `make apiserver` use it.
//
//	go run ./hack/apiserver [-write-kubeconfig .work/kubeconfig] [-operator dist/stratos]
//	    [-enable-admission-plugins OwnerReferencesPermissionEnforcement]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stratos-sh/stratos/test/harness"
)

func main() {
	kubeconfig := flag.String("write-kubeconfig", ".work/kubeconfig", "where to write the administrator kubeconfig")
	operator := flag.String("operator", "", "path of a stratos binary to run against the API server with the fake cloud (empty: none)")
	plugins := flag.String("enable-admission-plugins", "", "admission plugins to enable beside kube-apiserver's defaults, comma-separated (OwnerReferencesPermissionEnforcement, say)")
	flag.Parse()
	var opts harness.Options
	if *plugins != "" {
		opts.AdmissionPlugins = strings.Split(*plugins, ",")
	}
	if err := run(*kubeconfig, *operator, opts); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, operator string, opts harness.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver (the first run builds them, a few minutes)...")
	env, err := harness.StartWith(opts)
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the API server:", err)
		}
	}()
	if err := os.MkdirAll(filepath.Dir(kubeconfig), 0o755); err != nil {
		return err
	}
	if err := env.Kubeconfig(kubeconfig); err != nil {
		return err
	}
	fmt.Printf("API server ready in %s with the Stratos CRDs installed.\n", env.StartupTime.Round(time.Millisecond))
	fmt.Printf("  kubeconfig: %s\n  try:        bin/kubectl --kubeconfig %s apply -f config/samples\n", kubeconfig, kubeconfig)
	fmt.Printf("              bin/kubectl --kubeconfig %s get nodepools,nodeclaims\n", kubeconfig)

	if operator == "" {
		fmt.Println("Press Ctrl-C to stop.")
		<-ctx.Done()
		return nil
	}
	cmd := exec.Command(operator,
		"--kubeconfig", kubeconfig,
		"--cluster-name", "dev",
		"--cloud-provider", "fake",
		"--leader-election-namespace", "default",
		"--log-format", "text",
	)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// Its own process group keeps a terminal's Ctrl-C from reaching the operator
	// directly: it gets exactly one SIGTERM from us, as from a kubelet. A second signal
	// would make it exit at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the operator: %w", err)
	}
	fmt.Println("Stratos is running against it with the fake cloud. Press Ctrl-C to stop both.")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return fmt.Errorf("the operator exited: %v", err)
	case <-ctx.Done():
		// Stop the operator the way Kubernetes does: SIGTERM, then wait for it.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		return <-exited
	}
}
