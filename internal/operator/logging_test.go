package operator

import (
	"bytes"
	"encoding/json"
	"testing"
)

// logr's V(1) reads as DEBUG in the log, and only with --log-level=debug.
func TestDebugLinesAreNamedDebug(t *testing.T) {
	for level, want := range map[string]int{"debug": 2, "info": 1} {
		var out bytes.Buffer
		logger, err := NewLogger(&out, &Options{LogLevel: level, LogFormat: "json"})
		if err != nil {
			t.Fatal(err)
		}
		logger.Info("shown")
		logger.V(1).Info("detail")
		lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
		if len(lines) != want {
			t.Fatalf("--log-level=%s wrote %d lines, want %d: %s", level, len(lines), want, out.String())
		}
		var last struct{ Level, Msg string }
		if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
			t.Fatal(err)
		}
		if level == "debug" && (last.Msg != "detail" || last.Level != "DEBUG") {
			t.Fatalf("V(1) line %+v, want level DEBUG", last)
		}
	}
}
