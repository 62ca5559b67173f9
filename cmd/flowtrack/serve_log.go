package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	flag "github.com/spf13/pflag"
)

// logFlags are flowtrack serve's logging flags.
type logFlags struct {
	format, level *string
}

func serveLogFlags(fs *flag.FlagSet) *logFlags {
	return &logFlags{
		format: fs.String("log-format", "text", "log format: text (key=value lines) or json (one JSON object a line)"),
		level:  fs.String("log-level", "info", "least level logged: debug (every engine event), info, warn or error"),
	}
}

// logger returns the server's logger on w, or a usage error for a bad
// flag.
func (f *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(*f.level)); err != nil {
		return nil, usageError{fmt.Sprintf("serve: --log-level %q: want debug, info, warn or error", *f.level)}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(*f.format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError{fmt.Sprintf("serve: --log-format %q: want text or json", *f.format)}
}

// announcer prints serve's start-up lines ("flowtrack: serving cluster
// ... on URL", "flowtrack: REST API on URL/v2"): as plain lines in text
// format, which scripts read, and as log records (with attrs) in json
// format, so that every line of a JSON log is JSON.
type announcer struct {
	w    io.Writer
	json bool
	log  *slog.Logger
}

func (a announcer) say(msg string, attrs ...any) {
	if a.json {
		a.log.Info(msg, attrs...)
		return
	}
	fmt.Fprintf(a.w, "flowtrack: %s\n", msg)
}
