// Package logcapture gives tests a logger whose lines they can read back, each decoded
// from the JSON the operator would write, so a test can assert a log line's keys.
package logcapture

import (
	"encoding/json"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// New returns a logger that writes lines up to verbosity v (0 is INFO, 1 is debug) and
// the lines it wrote. A line that is not JSON fails the test.
func New(t testing.TB, v int) (logr.Logger, *[]map[string]any) {
	var lines []map[string]any
	return funcr.NewJSON(func(obj string) {
		line := map[string]any{}
		if err := json.Unmarshal([]byte(obj), &line); err != nil {
			t.Fatalf("a log line is not JSON: %s", obj)
		}
		lines = append(lines, line)
	}, funcr.Options{Verbosity: v}), &lines
}
