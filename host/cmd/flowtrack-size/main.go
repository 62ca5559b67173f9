// Command flowtrack-size prints the size of flowtrack's WebAssembly module,
// raw and gzipped (level 9, as a web server would serve it), so that size
// regressions show up in review. With no argument it measures the module
// embedded in package host.
//
//	go run ./host/cmd/flowtrack-size [module.wasm]
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"

	"github.com/flowtrack/flowtrack/host"
)

func main() {
	wasm, name := host.Module(), "embedded module"
	if len(os.Args) > 1 {
		var err error
		name = os.Args[1]
		if wasm, err = os.ReadFile(name); err != nil {
			fmt.Fprintln(os.Stderr, "flowtrack-size:", err)
			os.Exit(2)
		}
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(wasm)
	_ = zw.Close()
	fmt.Printf("%s: %d bytes raw (%.2f MB), %d bytes gzip (%.2f MB)\n",
		name, len(wasm), float64(len(wasm))/1e6, buf.Len(), float64(buf.Len())/1e6)
}
