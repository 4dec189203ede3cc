package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/capienv"
)

// ClusterAPI is Cluster API's core controller manager running against an Env, with its
// CRDs and webhooks installed.
type ClusterAPI struct {
	// Manager is the running capi-manager.
	Manager *capienv.Manager
	// Log is the manager's log file.
	Log string
	// Kubeconfig is the administrator's kubeconfig the manager connects with.
	Kubeconfig string
	// InstallTime is how long installing the CRDs and webhooks took; StartTime how long
	// the manager took to be healthy with its webhooks answering.
	InstallTime, StartTime time.Duration

	opts    capienv.Options
	logFile *os.File
}

// StartClusterAPI builds capi-manager if it is missing, installs CAPI's CRDs and
// webhooks in the Env's API server and starts the manager; workDir receives its
// kubeconfig, serving certificates and log.
func (e *Env) StartClusterAPI(ctx context.Context, workDir string) (*ClusterAPI, error) {
	tools, err := EnsureTools(capienv.Binary)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(workDir, "capi-manager.kubeconfig")
	if err := e.Kubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	webhook, err := capienv.NewWebhook(filepath.Join(workDir, "capi-webhook-certs"))
	if err != nil {
		return nil, err
	}
	started := time.Now()
	if err := capienv.Install(ctx, e.Config, filepath.Join(tools, capienv.ConfigDir), webhook); err != nil {
		return nil, fmt.Errorf("installing Cluster API: %w", err)
	}
	capi := &ClusterAPI{
		Log:         filepath.Join(workDir, "capi-manager.log"),
		Kubeconfig:  kubeconfig,
		InstallTime: time.Since(started),
		opts:        capienv.Options{ToolsDir: tools, Kubeconfig: kubeconfig, RestConfig: e.Config, Webhook: webhook},
	}
	if err := capi.start(ctx); err != nil {
		return nil, err
	}
	return capi, nil
}

func (c *ClusterAPI) start(ctx context.Context) error {
	logFile, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	started := time.Now()
	c.opts.Log = logFile
	m, err := capienv.Start(ctx, c.opts)
	if err != nil {
		logFile.Close()
		return fmt.Errorf("starting Cluster API's manager (log %s): %w", c.Log, err)
	}
	c.Manager, c.logFile, c.StartTime = m, logFile, time.Since(started)
	return nil
}

// Stop stops the manager.
func (c *ClusterAPI) Stop() error {
	err := c.Manager.Stop()
	c.logFile.Close()
	return err
}

// StartWithClusterAPI starts an Env with Cluster API's manager for one test; both stop
// when the test ends, and the manager's log is printed if the test failed.
func StartWithClusterAPI(t testing.TB) (*Env, *ClusterAPI) {
	t.Helper()
	env := StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	capi, err := env.StartClusterAPI(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Cluster API installed in %s, its manager ready in %s", capi.InstallTime.Round(time.Millisecond), capi.StartTime.Round(time.Millisecond))
	t.Cleanup(func() {
		if err := capi.Stop(); err != nil {
			t.Errorf("stopping Cluster API's manager: %v", err)
		}
		if t.Failed() {
			capi.PrintLog(os.Stderr)
		}
	})
	return env, capi
}

// PrintLog copies the last 200 lines of the manager's log to w, for a failed run.
func (c *ClusterAPI) PrintLog(w io.Writer) {
	data, err := os.ReadFile(c.Log)
	if err != nil {
		fmt.Fprintf(w, "reading Cluster API's log: %v\n", err)
		return
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[max(0, len(lines)-200):]
	fmt.Fprintf(w, "--- the end of Cluster API's manager log (%s) ---\n%s", c.Log, strings.Join(lines, ""))
}
