package doctest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fence is one fenced code block of a Markdown document.
type fence struct {
	lang string // the word after the opening fence ("go", "text", "js"...)
	body string // the lines between the fences, each ending in "\n"
	line int    // 1-based line of the opening fence
}

// fences returns the fenced code blocks of a Markdown document in order.
// A block's fence is three backquotes at the start of a line; an unclosed
// block is an error, so that a broken README fails loudly.
func fences(doc string) ([]fence, error) {
	var out []fence
	var cur *fence
	var body strings.Builder
	for i, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body.WriteString(line)
				body.WriteByte('\n')
			}
			continue
		}
		if cur == nil {
			cur = &fence{lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: i + 1}
			body.Reset()
			continue
		}
		cur.body = body.String()
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		return nil, &unclosedError{line: cur.line}
	}
	return out, nil
}

type unclosedError struct{ line int }

func (e *unclosedError) Error() string {
	return "code block opened on line " + itoa(e.line) + " is never closed"
}

func itoa(n int) string { return strconv.Itoa(n) }

// programs returns README's Go programs: every block of language go that
// is a whole program (package main), each with the text block that must
// follow it as its expected standard output.
func programs(t *testing.T, doc string) []program {
	t.Helper()
	blocks, err := fences(doc)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	var out []program
	for i, b := range blocks {
		if b.lang != "go" {
			continue
		}
		if !strings.HasPrefix(b.body, "package main\n") {
			t.Errorf("README.md line %d: a Go block must be a whole program (package main), so that it compiles as written", b.line)
			continue
		}
		if i+1 >= len(blocks) || blocks[i+1].lang != "text" {
			t.Errorf("README.md line %d: a Go program must be followed by a text block with what it prints", b.line)
			continue
		}
		out = append(out, program{source: b.body, want: blocks[i+1].body, line: b.line})
	}
	return out
}

// program is one of README's Go programs and the output it must print.
type program struct {
	source, want string
	line         int
}

// TestReadme_GoQuickStarts compiles and runs each Go program of README.md
// as written, from the repository's root (the programs read models by
// paths from there), and compares what it prints with the text block
// after it. The programs are written into a directory of this module
// whose name starts with "_", so the go command builds them as this
// module's code but ./... never lists them.
func TestReadme_GoQuickStarts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	progs := programs(t, string(doc))
	if len(progs) < 2 {
		t.Fatalf("README.md has %d Go programs; want the Go and the wazero host quick starts", len(progs))
	}
	for _, p := range progs {
		t.Run("line"+itoa(p.line), func(t *testing.T) {
			dir, err := os.MkdirTemp(filepath.Join(root, "internal", "doctest"), "_readme")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(p.source), 0o644); err != nil {
				t.Fatal(err)
			}
			// A generous bound against a hang, not a speed check: the
			// build links the engine (and wazero) from the build cache.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			bin := filepath.Join(dir, "quickstart")
			build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./"+filepath.Base(dir))
			build.Dir = filepath.Dir(dir)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("README.md line %d does not compile as written: %v\n%s", p.line, err, out)
			}
			run := exec.CommandContext(ctx, bin)
			run.Dir = root
			var stdout, stderr bytes.Buffer
			run.Stdout, run.Stderr = &stdout, &stderr
			if err := run.Run(); err != nil {
				t.Fatalf("README.md line %d fails: %v\n%s%s", p.line, err, stdout.String(), stderr.String())
			}
			if got := stdout.String(); got != p.want {
				t.Errorf("README.md line %d prints\n%s\nthe README says\n%s", p.line, got, p.want)
			}
		})
	}
}

// TestFences holds the block reader to the Markdown it must read.
func TestFences(t *testing.T) {
	doc := "# t\n\n```go\npackage main\n```\n\ntext\n\n```text\nok\n```\n"
	got, err := fences(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].lang != "go" || got[0].body != "package main\n" || got[0].line != 3 ||
		got[1].lang != "text" || got[1].body != "ok\n" {
		t.Fatalf("fences = %+v", got)
	}
	if _, err := fences("```go\nx\n"); err == nil {
		t.Fatal("an unclosed block was accepted")
	}
}
