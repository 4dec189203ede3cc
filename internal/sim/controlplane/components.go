package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/process"
)

// component is kube-scheduler or kube-controller-manager running as a child process.
type component struct {
	*process.Process
	port    int
	logFile *os.File
}

// startScheduler runs kube-scheduler without leader election and with client limits
// that let it bind a burst of a thousand pods without throttling itself.
func startScheduler(opts Options, kubeconfig string) (*component, error) {
	config := filepath.Join(opts.WorkDir, "kube-scheduler.yaml")
	data := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`, kubeconfig)
	if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
		return nil, err
	}
	return startComponent(opts, "kube-scheduler", "--config", config)
}

// startControllerManager runs kube-controller-manager with its default controllers
// (Deployments, ReplicaSets, DaemonSets, node lifecycle, garbage collection, …).
func startControllerManager(opts Options, kubeconfig string) (*component, error) {
	return startComponent(opts, "kube-controller-manager",
		"--kubeconfig", kubeconfig,
		"--leader-elect=false",
		"--kube-api-qps=500",
		"--kube-api-burst=1000",
		// A burst of pods is created by one ReplicaSet; more workers per kind keep
		// several workloads of a scenario from queueing behind each other.
		"--concurrent-replicaset-syncs=10",
		"--concurrent-deployment-syncs=10",
	)
}

func startComponent(opts Options, name string, args ...string) (*component, error) {
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(opts.WorkDir, name+".log"))
	if err != nil {
		return nil, err
	}
	args = append(args, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port))
	p, err := process.Start(name, filepath.Join(opts.ToolsDir, name), args, logFile)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	return &component{Process: p, port: port, logFile: logFile}, nil
}

// waitHealthy polls the component's /healthz until it answers ok, the component
// exits, or a minute passes.
func (c *component) waitHealthy(ctx context.Context) error {
	return c.WaitHealthy(ctx, fmt.Sprintf("https://127.0.0.1:%d/healthz", c.port), time.Minute)
}

// stop stops the component and closes its log.
func (c *component) stop() error {
	err := c.Stop()
	c.logFile.Close()
	return err
}
