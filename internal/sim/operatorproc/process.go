// Package operatorproc runs the stratos operator binary as a child process for the
// simulator: started, stopped gracefully, or killed hard as a crash would, with its peak
// resident memory tracked across restarts.
package operatorproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is the operator's current process, replaced on every restart.
type Process struct {
	binary string
	args   []string
	env    []string
	log    *os.File

	// restartMu serialises restarts, as kills scheduled by several steps may overlap.
	restartMu sync.Mutex

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	restarts int
	peakRSS  int64
}

// Start starts binary with args, in this process's environment with env added (KEY=value,
// replacing values of the same keys), appending its output to logPath.
func Start(binary string, args, env []string, logPath string) (*Process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	p := &Process{binary: binary, args: args, env: env, log: log}
	if err := p.start(); err != nil {
		log.Close()
		return nil, err
	}
	return p, nil
}

// start runs a new process; the caller holds no lock.
func (p *Process) start() error {
	cmd := exec.Command(p.binary, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// Its own process group: a terminal's Ctrl-C goes to the simulator, which stops
	// the operator itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.binary, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	return nil
}

// Alive reports whether the current process still runs.
func (p *Process) Alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// SampleRSS records the current process's peak resident memory (VmHWM), which the
// kernel keeps per process; sample before a process ends or its peak is lost.
func (p *Process) SampleRSS() {
	p.mu.Lock()
	pid := p.cmd.Process.Pid
	p.mu.Unlock()
	if hwm, err := readVmHWM(pid); err == nil {
		p.mu.Lock()
		p.peakRSS = max(p.peakRSS, hwm)
		p.mu.Unlock()
	}
}

// PeakRSS is the highest peak resident memory sampled over every process so far.
func (p *Process) PeakRSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakRSS
}

// Restarts counts the restarts, graceful or after a kill.
func (p *Process) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// Restart stops the process with SIGTERM (or SIGKILL when hard) and starts another
// after pause.
func (p *Process) Restart(hard bool, pause time.Duration) error {
	p.restartMu.Lock()
	defer p.restartMu.Unlock()
	if err := p.stop(hard); err != nil {
		return err
	}
	time.Sleep(pause) // the operator stays dead this long, as a pod restart takes time
	p.mu.Lock()
	p.restarts++
	p.mu.Unlock()
	return p.start()
}

// Stop stops the process with SIGTERM and closes the log.
func (p *Process) Stop() error {
	err := p.stop(false)
	return errors.Join(err, p.log.Close())
}

func (p *Process) stop(hard bool) error {
	p.SampleRSS()
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	signal := syscall.SIGTERM
	if hard {
		signal = syscall.SIGKILL
	}
	_ = cmd.Process.Signal(signal)
	select {
	case <-exited:
		return nil
	case <-time.After(45 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("the operator did not stop within 45s of SIGTERM and was killed")
	}
}

// readVmHWM reads a process's peak resident set size from /proc.
func readVmHWM(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/" + strconv.Itoa(pid) + "/status")
}
