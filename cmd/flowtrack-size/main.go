// Command flowtrack-size prints the size of flowtrack's WebAssembly module,
// raw and gzipped (level 9, as a web server would serve it), so that size
// regressions show up in review. With no argument it measures the module
// embedded in package host.
//
//	go run ./cmd/flowtrack-size [-profile N] [module.wasm]
//
// With -profile it also prints where the bytes go: each section, then the
// N Go packages and N functions with the most code. That needs the
// module's name section, which the committed module is built without
// (-ldflags=-s); make size builds one with names for it.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/flowtrack/flowtrack/host"
)

func main() {
	n := flag.Int("profile", 0, "also print the sections and the `N` largest packages and functions")
	flag.Parse()
	wasm, name := host.Module(), "embedded module"
	if flag.NArg() > 0 {
		var err error
		name = flag.Arg(0)
		if wasm, err = os.ReadFile(name); err != nil {
			fmt.Fprintln(os.Stderr, "flowtrack-size:", err)
			os.Exit(2)
		}
	}
	if err := report(os.Stdout, name, wasm, *n); err != nil {
		fmt.Fprintf(os.Stderr, "flowtrack-size: %s: %v\n", name, err)
		os.Exit(1)
	}
}

func report(w io.Writer, name string, wasm []byte, n int) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(wasm)
	_ = zw.Close()
	fmt.Fprintf(w, "%s: %d bytes raw (%.2f MB), %d bytes gzip (%.2f MB)\n",
		name, len(wasm), float64(len(wasm))/1e6, buf.Len(), float64(buf.Len())/1e6)
	if n <= 0 {
		return nil
	}
	p, err := profile(wasm)
	if err != nil {
		return err
	}
	pct := func(b int) float64 { return 100 * float64(b) / float64(len(wasm)) }
	fmt.Fprintln(w, "\nsections:")
	for _, s := range top(p.sections, len(p.sections)) {
		fmt.Fprintf(w, "%10d %5.1f%%  %s\n", p.sections[s], pct(p.sections[s]), s)
	}
	fmt.Fprintf(w, "\ncode by package (largest %d of %d):\n", min(n, len(p.packages)), len(p.packages))
	for _, k := range top(p.packages, n) {
		fmt.Fprintf(w, "%10d %5.1f%%  %s\n", p.packages[k], pct(p.packages[k]), k)
	}
	fmt.Fprintf(w, "\ncode by function (largest %d of %d):\n", min(n, len(p.funcs)), len(p.funcs))
	for _, k := range top(p.funcs, n) {
		fmt.Fprintf(w, "%10d %5.1f%%  %s\n", p.funcs[k], pct(p.funcs[k]), k)
	}
	return nil
}
