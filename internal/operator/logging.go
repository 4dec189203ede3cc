package operator

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/go-logr/logr"
)

// parseLevel maps --log-level to a slog level. logr's V(1) is slog's debug level.
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
	handlerOpts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler
	if opts.LogFormat == "text" {
		handler = slog.NewTextHandler(w, handlerOpts)
	} else {
		handler = slog.NewJSONHandler(w, handlerOpts)
	}
	return logr.FromSlogHandler(handler), nil
}
