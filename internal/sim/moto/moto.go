// Package moto runs moto_server, the open-source AWS emulator, on loopback for the EC2
// provider's tests and for the simulator's aws mode. hack/tools.sh finds moto_server on
// PATH or installs it into the tool cache; a missing emulator is installed, never a
// reason to skip. Clients reach it through a proxy that passes it one request at a
// time, as it is not safe for concurrent ones.
package moto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/tools"
)

// Region is the region the tests and the simulator use; moto serves any.
const Region = "us-east-1"

// Server is a running moto_server.
type Server struct {
	// Endpoint is the URL every AWS client of the tests is pointed at: a loopback proxy
	// that passes moto one request at a time (see oneAtATime).
	Endpoint string
	// direct is moto_server's own URL.
	direct string
	proxy  *httptest.Server
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs moto_server on a free loopback port, its output appended to logPath (none
// when empty), and returns once it answers.
func Start(ctx context.Context, logPath string) (*Server, error) {
	bin, err := tools.EnsureTools("moto_server")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "moto_server"), "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	// Its own process group, so that stopping it also stops the workers it forks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting moto_server: %w", err)
	}
	s := &Server{direct: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx, 30*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	target, err := url.Parse(s.direct)
	if err != nil {
		s.Stop()
		return nil, err
	}
	s.proxy = httptest.NewServer(oneAtATime(target))
	s.Endpoint = s.proxy.URL
	return s, nil
}

// StartT starts a moto_server for a test and stops it when the test ends.
func StartT(t testing.TB) *Server {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "moto.log")
	s, err := Start(context.Background(), logPath)
	if err != nil {
		t.Fatalf("moto_server: %v", err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("moto_server log (last 4 KiB):\n%s", tail(out, 4096))
			}
		}
	})
	return s
}

// Reset forgets every resource moto holds, so that one server serves several tests.
func (s *Server) Reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint+"/moto-api/reset", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto reset answered %s", resp.Status)
	}
	return nil
}

// Stop ends the server and the processes it started.
func (s *Server) Stop() {
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.direct+"/moto-api/data.json", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return errors.New("moto_server exited before it answered")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("moto_server did not answer at %s within %s", s.Endpoint, timeout)
		}
	}
}

// freePort asks the kernel for a loopback port nobody holds.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
