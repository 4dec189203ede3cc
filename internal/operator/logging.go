package operator

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/go-logr/logr"
)

// parseLevel maps --log-level to a slog level. logr's V(n) is slog level -n, so debug
// (-4) lets V(1) to V(4) through.
func parseLevel(level string) (slog.Level, error) {
	switch level {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "error":
		return slog.LevelError, nil
	default:
		return 0, fmt.Errorf("--log-level %q is not debug, info or error", level)
	}
}

// NewLogger returns a structured logger writing to w in the format and level of opts.
func NewLogger(w io.Writer, opts *Options) (logr.Logger, error) {
	level, err := parseLevel(opts.LogLevel)
	if err != nil {
		return logr.Discard(), err
	}
	handlerOpts := &slog.HandlerOptions{Level: level, ReplaceAttr: debugLevelName}
	var handler slog.Handler
	if opts.LogFormat == "text" {
		handler = slog.NewTextHandler(w, handlerOpts)
	} else {
		handler = slog.NewJSONHandler(w, handlerOpts)
	}
	return logr.FromSlogHandler(handler), nil
}

// debugLevelName names every level below info DEBUG: slog would print logr's V(1) as
// "DEBUG+3", which reads like a bug.
func debugLevelName(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if level, ok := a.Value.Any().(slog.Level); ok && level < slog.LevelInfo {
			a.Value = slog.StringValue(slog.LevelDebug.String())
		}
	}
	return a
}
