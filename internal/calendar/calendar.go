// Package calendar is a clock for time windows that another process can set: the
// simulator moves the operator's calendar across window boundaries (a scenario's
// setClock step) by writing a small file the operator watches. Only the windows read
// it; timeouts and backoffs keep the real clock.
package calendar

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Setting is the file's content: at real time SetAt the calendar read Time, and it
// advances Rate times as fast as real time since (the simulator's time scale).
type Setting struct {
	Time  time.Time `json:"time"`
	SetAt time.Time `json:"setAt"`
	Rate  float64   `json:"rate"`
}

// Write replaces the file at path with s, atomically, so a reader never sees half of it.
func Write(path string, s Setting) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calendar-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// File is a clock set by the file at a path: the real clock until the file exists.
type File struct {
	path string
	real clock.PassiveClock

	mu      sync.Mutex
	setting *Setting
	raw     string
	changed chan struct{}
}

var _ clock.PassiveClock = (*File)(nil)

// NewFile returns the calendar set by the file at path, read once now.
func NewFile(path string, real clock.PassiveClock) (*File, error) {
	f := &File{path: path, real: real, changed: make(chan struct{}, 1)}
	if _, err := f.reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Now is the calendar's time.
func (f *File) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.real.Now()
	if f.setting == nil {
		return now
	}
	rate := f.setting.Rate
	if rate <= 0 {
		rate = 1
	}
	return f.setting.Time.Add(time.Duration(float64(now.Sub(f.setting.SetAt)) * rate))
}

// Rate is how many times as fast as real time the calendar runs (the simulator's time
// scale): a duration measured on the real clock, such as a node's warm-up, is Rate times
// as long on the calendar.
func (f *File) Rate() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setting == nil || f.setting.Rate <= 0 {
		return 1
	}
	return f.setting.Rate
}

// Since is the calendar's time since t.
func (f *File) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// Changed signals, without blocking, each time the file sets the calendar anew.
func (f *File) Changed() <-chan struct{} { return f.changed }

// Watch reads the file again every interval until ctx ends.
func (f *File) Watch(ctx context.Context, interval time.Duration) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			changed, err := f.reload()
			if err != nil {
				continue // a bad write is replaced by the next one; the last setting holds
			}
			if changed {
				select {
				case f.changed <- struct{}{}:
				default:
				}
			}
		}
	}
}

// reload reads the file and reports whether its setting changed.
func (f *File) reload() (bool, error) {
	data, err := os.ReadFile(f.path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if string(data) == f.raw {
		return false, nil
	}
	s := &Setting{}
	if err := json.Unmarshal(data, s); err != nil {
		return false, fmt.Errorf("reading the calendar file %s: %w", f.path, err)
	}
	f.setting, f.raw = s, string(data)
	return true, nil
}
