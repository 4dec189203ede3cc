package stack

import (
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
)

// TestLogger is a logger writing to t until the test's cleanup silences it. A manager's
// event broadcaster sends its last Events from goroutines the manager's stop does not
// wait for, and a line logged to t after the test has completed panics the test binary.
// The silencing cleanup is registered first, so it runs after every other: the managers
// stopped, their lines so far written.
func TestLogger(t testing.TB) logr.Logger {
	s := &silenced{}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.done = true
	})
	return logr.New(untilDone{LogSink: testr.NewWithInterface(t, testr.Options{Verbosity: 1}).GetSink(), s: s})
}

// silenced says whether the test has ended; its lock is held while a line is written, so
// that no line starts after it is set.
type silenced struct {
	mu   sync.Mutex
	done bool
}

// untilDone passes lines to its sink until the test has ended.
type untilDone struct {
	logr.LogSink
	s *silenced
}

func (u untilDone) Info(level int, msg string, kv ...any) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	if !u.s.done {
		u.LogSink.Info(level, msg, kv...)
	}
}

func (u untilDone) Error(err error, msg string, kv ...any) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	if !u.s.done {
		u.LogSink.Error(err, msg, kv...)
	}
}

func (u untilDone) WithValues(kv ...any) logr.LogSink {
	return untilDone{LogSink: u.LogSink.WithValues(kv...), s: u.s}
}

func (u untilDone) WithName(name string) logr.LogSink {
	return untilDone{LogSink: u.LogSink.WithName(name), s: u.s}
}
