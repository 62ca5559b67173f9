package host_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// userProgram is a program of a module outside the repository that embeds
// flowtrack through package host.
const userProgram = `package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/flowtrack/flowtrack/host"
)

func main() {
	ctx := context.Background()
	xml, err := os.ReadFile(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	e, err := host.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if _, err := e.Deploy(ctx, "timer.bpmn", xml); err != nil {
		log.Fatal(err)
	}
	key, err := e.Start(ctx, "timer", nil)
	if err != nil {
		log.Fatal(err)
	}
	for {
		at, ok := e.NextDeadline()
		if !ok {
			break
		}
		if err := e.AdvanceTo(ctx, at); err != nil {
			log.Fatal(err)
		}
	}
	state, err := e.State(ctx, key)
	fmt.Println("state:", state, err)
}
`

// TestOutsideModule builds what a user gets from a plain clone, with no
// make step: a module outside the repository that requires flowtrack
// (replaced by the clone) builds and runs a program using package host, and
// builds and runs the CLI. It is what the committed flowtrack.wasm.gz is
// for (RATIONALE.md).
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs in a fresh module: make race (part of make test) runs it")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tracked, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): cannot tell which files a clone has", err)
	}
	work := t.TempDir()
	clone := filepath.Join(work, "flowtrack")
	for _, name := range strings.Split(strings.TrimRight(string(tracked), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	user := filepath.Join(work, "user")
	goMod := "module example.com/user\n\ngo 1.26\n\nrequire github.com/flowtrack/flowtrack v0.0.0\n\nreplace github.com/flowtrack/flowtrack => ../flowtrack\n"
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sums, "main.go": []byte(userProgram)} {
		if err := os.MkdirAll(user, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(user, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := filepath.Join(root, "host", "testdata", "timer.bpmn")
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = user
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	if out := gocmd("run", ".", model); !strings.Contains(out, "state: completed <nil>") {
		t.Fatalf("the program using package host printed\n%s", out)
	}
	cli := filepath.Join(work, "flowtrack-cli")
	gocmd("build", "-o", cli, "github.com/flowtrack/flowtrack/cmd/flowtrack")
	out, err := exec.Command(cli, "run", model).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "completed") {
		t.Fatalf("flowtrack run: %v\n%s", err, out)
	}
}
