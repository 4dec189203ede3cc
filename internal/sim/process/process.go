// Package process runs the simulator's and the tests' helper programs (kube-scheduler,
// kube-controller-manager, Cluster API's manager) as child processes on loopback: start
// one, wait until its health endpoint answers, stop it.
package process

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"time"
)

// Process is a running child process.
type Process struct {
	name   string
	cmd    *exec.Cmd
	exited chan error
}

// Start runs the program at path with args; its standard output and error go to log.
func Start(name, path string, args []string, log io.Writer) (*Process, error) {
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: a terminal's Ctrl-C reaches the parent, which stops its
	// children in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// WaitHealthy polls url until it answers 200, the process exits, ctx ends or timeout
// passes. The url may be https with a self-signed certificate, as the Kubernetes
// components serve their health checks.
func (p *Process) WaitHealthy(ctx context.Context, url string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	return p.Poll(ctx, timeout, func(context.Context) bool {
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Poll calls ready every 100ms until it returns true, the process exits, ctx ends or
// timeout passes.
func (p *Process) Poll(ctx context.Context, timeout time.Duration, ready func(context.Context) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready(ctx) {
			return nil
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("%s exited before it was ready: %v (see its log)", p.name, err)
		case <-deadline.C:
			return fmt.Errorf("%s not ready after %s (see its log)", p.name, timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM and waits up to ten seconds before killing the process. Stopping
// a process that has exited does nothing.
func (p *Process) Stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		p.exited <- <-p.exited
		return errors.New(p.name + " did not stop on SIGTERM and was killed")
	}
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
