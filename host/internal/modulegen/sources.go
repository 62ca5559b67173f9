package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// digestPrefix starts the gzip header comment that records the digest of
// the sources a committed module was built from.
const digestPrefix = "flowtrack module sources sha256:"

// sourcesDigest returns a digest of everything the module built from dir
// (the host directory) depends on: the Go version, every file of the
// module's own packages the wasip1 build of ../wasm compiles or embeds,
// the version of every other module it uses, and modulegen's own sources
// (it joins data segments and pre-initialises the module). Two trees with
// the same digest build the same module, so -fresh can tell, in a second
// or two and without building, that the committed module is current.
func sourcesDigest(dir string) (string, error) {
	goVersion, err := goOutput(dir, nil, "env", "GOVERSION")
	if err != nil {
		return "", err
	}
	listing, err := goOutput(dir, []string{"GOOS=wasip1", "GOARCH=wasm"}, "list", "-deps", "-f",
		`{{if not .Standard}}{{if .Module}}{{if .Module.Main}}main {{.ImportPath}} {{.Dir}} {{join .GoFiles " "}} {{join .EmbedFiles " "}}{{else}}dep {{.Module.Path}}@{{.Module.Version}}{{end}}{{end}}{{end}}`, "../wasm")
	if err != nil {
		return "", err
	}
	self, err := filepath.Glob(filepath.Join(dir, "internal", "modulegen", "*.go"))
	if err != nil {
		return "", err
	}
	var own []string
	for _, f := range self {
		if !strings.HasSuffix(f, "_test.go") {
			own = append(own, f)
		}
	}
	return digestOf(goVersion, listing, own, os.ReadFile)
}

// digestOf hashes the Go version, a go list listing (lines "main
// IMPORTPATH DIR FILE..." and "dep MODULE@VERSION") and the files extra,
// reading files with read. Files are named by import path and base name,
// so the digest does not depend on where the tree is checked out.
func digestOf(goVersion, listing string, extra []string, read func(string) ([]byte, error)) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "go %s\n", strings.TrimSpace(goVersion))
	file := func(name, path string) error {
		b, err := read(path)
		if err != nil {
			return fmt.Errorf("sources digest: %w", err)
		}
		fmt.Fprintf(h, "file %s %d\n", name, len(b))
		h.Write(b)
		return nil
	}
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case fields[0] == "dep":
			fmt.Fprintf(h, "%s\n", line)
		case fields[0] == "main" && len(fields) >= 3:
			for _, f := range fields[3:] {
				if err := file(fields[1]+"/"+f, filepath.Join(fields[2], f)); err != nil {
					return "", err
				}
			}
		default:
			return "", fmt.Errorf("sources digest: unexpected go list line %q", line)
		}
	}
	for _, f := range extra {
		if err := file("modulegen/"+filepath.Base(f), f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goOutput runs the go command in dir with env added and returns its
// standard output.
func goOutput(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args[:1], " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// recordedDigest returns the sources digest the gzip file name records,
// or "" when it records none.
func recordedDigest(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := newGzipReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	d, ok := strings.CutPrefix(zr.Comment, digestPrefix)
	if !ok {
		return "", nil
	}
	return d, nil
}
