// Command modulegen builds flowtrack's WebAssembly module from ../wasm and
// writes it where package host embeds it (flowtrack.wasm.gz, committed, so
// that a plain clone builds and `go install` works) and, uncompressed, where
// the SDK and the benchmarks take it (flowtrack.wasm, not committed). It
// also builds the Extism plug-in (../wasm with tag extism, EXTISM.md) into
// flowtrack.extism.wasm, which is not committed either: nothing embeds it,
// and it would double what each engine change adds to the repository
// (RATIONALE.md). It runs from the host directory:
//
//	go generate ./host      # or: make wasm
//
// The build is reproducible (-trimpath, no VCS stamp), so -check can tell
// whether the committed module is the one the sources build today:
//
//	go run ./host/internal/modulegen -check
//
// That builds the module (a minute or two on a cold build cache). The
// committed file's gzip header also records a digest of the sources it
// was built from (sources.go), so -fresh answers the same question for a
// tree whose sources did not change since, in a second or two and without
// building: make run uses it to skip the build.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

const (
	rawName    = "flowtrack.wasm"
	gzName     = "flowtrack.wasm.gz"
	extismName = "flowtrack.extism.wasm"
)

func main() {
	check := flag.Bool("check", false, "report whether "+gzName+" holds what the sources build, and change nothing")
	fresh := flag.Bool("fresh", false, "report, without building, whether "+gzName+" was built from the sources as they are now (its recorded digest)")
	dir := flag.String("dir", ".", "the host package directory")
	flag.Parse()
	if *fresh {
		if err := checkFresh(*dir); err != nil {
			fmt.Fprintln(os.Stderr, "modulegen:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "modulegen:", err)
		os.Exit(1)
	}
}

// checkFresh returns nil when the committed module records the digest of
// the sources as they are now, and an error saying why not otherwise.
func checkFresh(dir string) error {
	recorded, err := recordedDigest(filepath.Join(dir, gzName))
	if err != nil {
		return err
	}
	if recorded == "" {
		return fmt.Errorf("%s records no sources digest: it must be built", filepath.Join(dir, gzName))
	}
	now, err := sourcesDigest(dir)
	if err != nil {
		return err
	}
	if now != recorded {
		return fmt.Errorf("the sources changed since %s was built: it must be built again", filepath.Join(dir, gzName))
	}
	return nil
}

func run(dir string, check bool) error {
	tmp, err := os.MkdirTemp("", "modulegen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	digest, err := sourcesDigest(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "modulegen: building the WebAssembly module from ../wasm (GOOS=wasip1; a minute or two on a cold build cache)")
	fresh, err := build(dir, filepath.Join(tmp, rawName), "")
	if err != nil {
		return err
	}
	committed, err := readGzip(filepath.Join(dir, gzName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if check {
		if !bytes.Equal(fresh, committed) {
			return fmt.Errorf("%s is stale: it is not what the sources build now; run `make wasm` (or `go generate ./host`) and commit it", filepath.Join(dir, gzName))
		}
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, rawName), fresh, 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "modulegen: building the Extism plug-in")
	if _, err := build(dir, filepath.Join(dir, extismName), "extism"); err != nil {
		return err
	}
	recorded, err := recordedDigest(filepath.Join(dir, gzName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if bytes.Equal(fresh, committed) && recorded == digest {
		return nil // leave the file alone: no change, no new timestamp
	}
	return writeGzip(filepath.Join(dir, gzName), fresh, digest)
}

// build compiles the module as a WASI reactor, reproducibly, with the
// build tags in tags (comma-separated, or empty), and joins its data
// segments (mergeData). The engine module (no tags) is also
// pre-initialised (preinit), so that it starts with Go's runtime and
// package initialisation already done; the Extism plug-in is left as Go
// links it, since Extism's hosts and go-pdk own its start-up.
func build(dir, out, tags string) ([]byte, error) {
	// go generate puts the go command that runs it first on PATH.
	cmd := exec.Command("go", "build", "-tags="+tags, "-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, "../wasm")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build the module: %w", err)
	}
	linked, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	wasm, err := mergeData(linked)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	if tags == "" {
		fmt.Fprintln(os.Stderr, "modulegen: pre-initialising the module")
		if wasm, err = preinit(context.Background(), wasm); err != nil {
			return nil, fmt.Errorf("%s: pre-initialise: %w", out, err)
		}
	}
	return wasm, os.WriteFile(out, wasm, 0o644)
}

func readGzip(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := newGzipReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return io.ReadAll(zr)
}

func newGzipReader(r io.Reader) (*gzip.Reader, error) { return gzip.NewReader(r) }

// writeGzip writes b compressed with no name or time in the header, so the
// same module from the same sources always gives the same file; the
// header's comment records digest, the sources digest (-fresh).
func writeGzip(name string, b []byte, digest string) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.Comment = digestPrefix + digest
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(name, buf.Bytes(), 0o644)
}
