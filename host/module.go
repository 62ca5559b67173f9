package host

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
)

//go:generate go run ./internal/modulegen

// moduleGzip is the WebAssembly module built from ../wasm, compressed. It is
// committed, so that a plain clone builds and `go install` works; `make
// test` fails when it is not what the sources build (RATIONALE.md).
//
//go:embed flowtrack.wasm.gz
var moduleGzip []byte

// Module returns the flowtrack WebAssembly module this package embeds, the
// one New runs unless WithModule says otherwise. The slice is shared: do
// not modify it.
//
// # Why a copy on disk?
//
// Decompressing the embedded module (about 15 MB) costs every process
// about 70 ms of CPU, as much as everything else its first New does with
// a warm compilation cache. So the first process writes the decompressed
// module next to that cache (os.UserCacheDir()/flowtrack/module), and
// later ones read it back, checked against the gzip trailer's CRC-32 and
// length, which costs a few milliseconds; a copy that fails the check is
// replaced. Without a usable cache directory, Module decompresses.
var Module = sync.OnceValue(func() []byte {
	name := moduleCopyName(cacheDir())
	if b := readModuleCopy(name); b != nil {
		return b
	}
	b := gunzipModule()
	if name != "" {
		writeModuleCopy(name, b) // best effort: the next process decompresses again
	}
	return b
})

// cacheDir is where the default runtime keeps what it caches across
// processes (os.UserCacheDir()/flowtrack), or "" when there is none.
func cacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "flowtrack")
}

// moduleCopyName is the file of the embedded module's decompressed copy
// under dir (named by the SHA-256 of the compressed module, so programs
// built with different modules never share one), or "" without a dir.
func moduleCopyName(dir string) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256(moduleGzip)
	return filepath.Join(dir, "module", hex.EncodeToString(sum[:16])+".wasm")
}

// readModuleCopy returns the decompressed copy at name, or nil when there
// is none or it is not exactly the embedded module: its length and CRC-32
// must be the ones the gzip trailer records.
func readModuleCopy(name string) []byte {
	if name == "" || len(moduleGzip) < 8 {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	trailer := moduleGzip[len(moduleGzip)-8:]
	if uint32(len(b)) != binary.LittleEndian.Uint32(trailer[4:]) || crc32.ChecksumIEEE(b) != binary.LittleEndian.Uint32(trailer) {
		return nil
	}
	return b
}

// writeModuleCopy writes b to name through a temporary file and a rename,
// so that a reader never sees a partial copy. Errors are ignored: the copy
// only saves time.
func writeModuleCopy(name string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(name), "module-*.tmp")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
}

// gunzipModule decompresses the embedded module.
func gunzipModule() []byte {
	zr, err := gzip.NewReader(bytes.NewReader(moduleGzip))
	if err != nil {
		panic("flowtrack host: embedded module: " + err.Error()) // the build embedded a broken file
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		panic("flowtrack host: embedded module: " + err.Error())
	}
	return b
}
