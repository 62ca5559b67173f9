package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/server/rest"
)

// TestServe_HTTPFlags: --http-tls-cert without --http is a usage error,
// --http beyond loopback without users is refused, and --http-auth is
// gone (the REST API's users are --config's).
func TestServe_HTTPFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--port", "0", "--data", t.TempDir(), "--http-tls-cert", "c.pem", "--http-tls-key", "k.pem"},
		{"--port", "0", "--data", t.TempDir(), "--http", "0.0.0.0:0"},
		{"--port", "0", "--data", t.TempDir(), "--http", "127.0.0.1:0", "--http-auth", "auth.json"},
	} {
		code, err := serveCmd(context.Background(), args, io.Discard)
		if err == nil || code != exitUsage {
			t.Errorf("serve %v: exit %d, %v; want a usage error", args, code, err)
		}
	}
}

// TestServe_HTTPConfigUsers: with --config the REST API authenticates
// the configuration's users (Basic) with their roles; a configuration
// whose users cannot use Basic (nkey users) and has no oauth is refused
// with --http rather than serving REST unauthenticated.
func TestServe_HTTPConfigUsers(t *testing.T) {
	dir := t.TempDir()
	hash, err := rest.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	nkeyOnly := filepath.Join(dir, "nkey.json")
	if err := os.WriteFile(nkeyOnly, []byte(`{"listen":"127.0.0.1:0","users":[{"nkey":"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4","role":"admin"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := serveCmd(context.Background(), []string{"--config", nkeyOnly, "--data", filepath.Join(dir, "d1"), "--http", "127.0.0.1:0"}, io.Discard); err == nil || !strings.Contains(err.Error(), "nobody could call") {
		t.Errorf("nkey-only users with --http: %v, want refused", err)
	}

	conf := filepath.Join(dir, "flowtrack.json")
	if err := os.WriteFile(conf, []byte(`{"listen":"127.0.0.1:0","users":[{"name":"eve","passwordHash":"`+hash+`","role":"reader"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := serveHTTP(t, "--config", conf, "--data", filepath.Join(dir, "d2"), "--http", "127.0.0.1:0")
	defer stop()
	get := func(method, path, user string) int {
		req, _ := http.NewRequest(method, base+path, nil)
		if user != "" {
			req.SetBasicAuth(user, "pw")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get("GET", "/v2/topology", ""); st != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", st)
	}
	if st := get("GET", "/v2/topology", "eve"); st != http.StatusOK {
		t.Errorf("reader eve reads: %d, want 200", st)
	}
	if st := get("POST", "/v2/clock/reset", "eve"); st != http.StatusForbidden {
		t.Errorf("reader eve resets the clock: %d, want 403", st)
	}
}

// serveHTTP runs serveCmd with args until the returned stop, which
// checks it ended well; it returns the REST API's base URL.
func serveHTTP(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := serveCmd(ctx, args, w)
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
	return base, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("serve did not stop")
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
