package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// component is kube-scheduler or kube-controller-manager running as a child process.
type component struct {
	name   string
	cmd    *exec.Cmd
	port   int
	exited chan error
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
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(opts.WorkDir, name+".log"))
	if err != nil {
		return nil, err
	}
	args = append(args, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port))
	cmd := exec.Command(filepath.Join(opts.ToolsDir, name), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a terminal's Ctrl-C reaches the simulator, which stops
	// the components in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &component{name: name, cmd: cmd, port: port, exited: make(chan error, 1)}
	go func() {
		c.exited <- cmd.Wait()
		logFile.Close()
	}()
	return c, nil
}

// waitHealthy polls the component's /healthz until it answers ok, the component
// exits, or a minute passes.
func (c *component) waitHealthy(ctx context.Context) error {
	client := &http.Client{
		Timeout: time.Second,
		// The components serve their health check with a self-signed certificate.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", c.port)
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-c.exited:
			c.exited <- err
			return fmt.Errorf("%s exited before it was healthy: %v (see its log)", c.name, err)
		case <-deadline.C:
			return fmt.Errorf("%s not healthy after a minute", c.name)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM and waits up to ten seconds before killing the process.
func (c *component) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return errors.New(c.name + " did not stop on SIGTERM and was killed")
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
