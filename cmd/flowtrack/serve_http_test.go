package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServe_HTTPFlags: --http-auth without --http is a usage error, and
// --http beyond loopback without --http-auth is refused.
func TestServe_HTTPFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--port", "0", "--data", t.TempDir(), "--http-auth", "auth.json"},
		{"--port", "0", "--data", t.TempDir(), "--http", "0.0.0.0:0"},
	} {
		code, err := serveCmd(context.Background(), args, io.Discard)
		if err == nil || code != exitUsage {
			t.Errorf("serve %v: exit %d, %v; want a usage error", args, code, err)
		}
	}
}

// TestServe_HTTP: flowtrack serve --http prints the REST API's address,
// answers on it, and stops with the server.
func TestServe_HTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := serveCmd(ctx, []string{"--port", "0", "--data", t.TempDir(), "--http", "127.0.0.1:0"}, w)
		_ = w.Close()
		done <- err
	}()
	lines := bufio.NewScanner(r)
	re := regexp.MustCompile(`REST API on (\S+)/v2`)
	var base string
	for base == "" && lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	if base == "" {
		cancel()
		t.Fatalf("serve printed no REST address: %v", <-done)
	}
	resp, err := http.Get(base + "/v2/topology")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/topology: %s", resp.Status)
	}
	// The metrics and health checks are served beside the API.
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ok",
		"/metrics": "flowtrack_nats_server_in_messages_total"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %s, want 200 with %q in:\n%.300s", path, resp.Status, want, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}
	if _, err := http.Get(base + "/v2/status"); err == nil {
		t.Fatal("the REST API still answers after serve stopped")
	}
}

// TestServe_LogFormat: with --log-format json every line serve prints is
// a JSON object, the start-up lines with the URL as an attribute; a bad
// format or level is a usage error.
func TestServe_LogFormat(t *testing.T) {
	for _, args := range [][]string{
		{"--port", "0", "--data", t.TempDir(), "--log-format", "xml"},
		{"--port", "0", "--data", t.TempDir(), "--log-level", "loud"},
	} {
		if code, err := serveCmd(context.Background(), args, io.Discard); err == nil || code != exitUsage {
			t.Errorf("serve %v: exit %d, %v; want a usage error", args, code, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := serveCmd(ctx, []string{"--port", "0", "--data", t.TempDir(), "--http", "127.0.0.1:0", "--log-format", "json"}, w)
		_ = w.Close()
		done <- err
	}()
	lines := bufio.NewScanner(r)
	var serving, rest map[string]any
	for (serving == nil || rest == nil) && lines.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(lines.Bytes(), &rec); err != nil {
			cancel()
			t.Fatalf("line %q is not JSON: %v", lines.Text(), err)
		}
		msg, _ := rec["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "serving cluster default on "):
			serving = rec
		case strings.HasPrefix(msg, "REST API on "):
			rest = rec
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("serve: %v", err)
	}
	if serving == nil || serving["cluster"] != "default" || !strings.HasPrefix(fmt.Sprint(serving["url"]), "nats://") {
		t.Errorf("serving line: %v", serving)
	}
	if rest == nil || !strings.HasSuffix(fmt.Sprint(rest["url"]), "/v2") {
		t.Errorf("REST line: %v", rest)
	}
}
