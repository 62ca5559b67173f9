package main

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// reactor is a small WASI-style reactor: a memory of one page with "hello"
// at 200, a mutable i32 global (5), an immutable i64 global (7), and an
// _initialize that stores 42 at 100, sets the mutable global to -3 and
// grows the memory by a page. With export false it exports no _initialize.
func reactor(export bool) []byte {
	sec := func(id byte, body ...byte) []byte {
		return append(binary.AppendUvarint([]byte{id}, uint64(len(body))), body...)
	}
	code := []byte{
		0,                // no locals
		0x41, 0xe4, 0x00, // i32.const 100
		0x41, 0x2a, // i32.const 42
		0x3a, 0, 0, // i32.store8
		0x41, 0x7d, // i32.const -3
		0x24, 0, // global.set 0
		0x41, 1, // i32.const 1
		0x40, 0, // memory.grow
		0x1a, // drop
		0x0b,
	}
	exports := []byte{1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0}
	if export {
		exports = append([]byte{2}, exports[1:]...)
		exports = append(exports, 11)
		exports = append(exports, "_initialize"...)
		exports = append(exports, 0, 0)
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(secType, 1, 0x60, 0, 0)...)
	m = append(m, sec(secFunction, 1, 0)...)
	m = append(m, sec(secMemory, 1, 0, 1)...)
	m = append(m, sec(secGlobal, 2, valI32, 1, 0x41, 5, 0x0b, valI64, 0, 0x42, 7, 0x0b)...)
	m = append(m, sec(secExport, exports...)...)
	m = append(m, sec(secCode, append([]byte{1, byte(len(code))}, code...)...)...)
	return append(m, sec(secData, append([]byte{1, 0, 0x41, 0xc8, 0x01, 0x0b, 5}, "hello"...)...)...)
}

func TestPreinit(t *testing.T) {
	ctx := context.Background()
	out, err := preinit(ctx, reactor(true))
	if err != nil {
		t.Fatal(err)
	}
	// Read the result the way preinit reads a module: instantiated, with
	// its globals exported, but without calling _initialize.
	secs, err := sections(out)
	if err != nil {
		t.Fatal(err)
	}
	globals, err := readGlobals(secs)
	if err != nil {
		t.Fatal(err)
	}
	if len(globals) != 2 || !globals[0].mutable || globals[1].mutable {
		t.Fatalf("globals %+v, want a mutable i32 and an immutable i64", globals)
	}
	probe, err := exportGlobals(secs, globals)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	mod, err := rt.InstantiateWithConfig(ctx, probe, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	mem := mod.Memory()
	if got := mem.Size(); got != 2*65536 {
		t.Errorf("memory %d bytes at instantiation, want the 2 pages _initialize left", got)
	}
	if b, _ := mem.ReadByte(100); b != 42 {
		t.Errorf("byte 100 = %d, want the 42 _initialize stored", b)
	}
	if b, _ := mem.Read(200, 5); string(b) != "hello" {
		t.Errorf("bytes 200..205 = %q, want the linker's data %q", b, "hello")
	}
	if g := int32(uint32(mod.ExportedGlobal(globalExportPrefix + "0").Get())); g != -3 {
		t.Errorf("global 0 = %d, want the -3 _initialize set", g)
	}
	// _initialize is still exported (hosts call it) and now does nothing.
	if _, err := mod.ExportedFunction("_initialize").Call(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mem.Size(); got != 2*65536 {
		t.Errorf("memory %d bytes after _initialize, want it untouched (2 pages)", got)
	}

	again, err := preinit(ctx, reactor(true))
	if err != nil || string(again) != string(out) {
		t.Errorf("a second preinit gave a different module (err %v): the build must be reproducible", err)
	}
}

func TestPreinit_NotAReactor(t *testing.T) {
	_, err := preinit(context.Background(), reactor(false))
	if err == nil || !strings.Contains(err.Error(), "_initialize") {
		t.Fatalf("err = %v, want one naming the missing _initialize", err)
	}
	if _, err := preinit(context.Background(), []byte("not wasm")); err == nil {
		t.Fatal("preinit accepted bytes that are not a module")
	}
}
