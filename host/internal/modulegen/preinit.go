package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// globalExportPrefix names the exports preinit adds, in the copy of the
// module it runs, to read each mutable global after _initialize.
const globalExportPrefix = "flowtrack.preinit.global."

// preinit returns the module as it is after its _initialize export has
// run: the memory image and the mutable globals that _initialize leaves
// become the module's data segment and initial global values, and
// _initialize becomes a function that does nothing, so hosts that call it
// (as every WASI host does with a reactor) pay nothing for it. Go's
// runtime set-up and every package initialiser then run once, here, at
// build time, instead of at every instantiation (RATIONALE.md: V8 spent
// 13.8 ms in _initialize per engine from a compiled module, and far more
// on a first create, where every function it runs is compiled first).
//
// It runs the module in wazero with the WASI defaults of a
// wazero.ModuleConfig (no arguments but the program name, no environment,
// no files, fixed clocks and a fixed random source), so the result is the
// same on every build, which make wasm-check relies on. What Go's
// initialisation reads from the host is therefore fixed in the module: the
// random seeds of the runtime (map hash seeds: wazero's default source
// already gave every instance the same ones) and the start of the
// monotonic clock, from which Go measures every monotonic reading (only
// differences of those are ever used). Nothing else in the module's
// initialisation asks the host: the time zone is loaded on first use and
// the engine reads time only from the host's requests.
func preinit(ctx context.Context, wasm []byte) ([]byte, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	globals, err := readGlobals(secs)
	if err != nil {
		return nil, err
	}
	probe, err := exportGlobals(secs, globals)
	if err != nil {
		return nil, err
	}
	mem, values, err := runInitialize(ctx, probe, globals)
	if err != nil {
		return nil, err
	}
	return snapshot(secs, globals, mem, values)
}

// global is a global the module defines: its index in the global index
// space, value type, mutability and initial value.
type global struct {
	index   uint32
	valType byte
	mutable bool
	init    int64
}

// Value types a Go module's globals have.
const (
	valI32 = 0x7f
	valI64 = 0x7e
)

// readGlobals reads the global section. Go's linker defines only i32 and
// i64 globals initialised by one constant and imports none; anything else
// is refused, so that a future toolchain that emits more fails here
// instead of producing a wrong module.
func readGlobals(secs []section) ([]global, error) {
	if i := find(secs, secImport); i >= 0 {
		if _, err := importedFuncs(secs[i].body); err != nil { // refuses imported globals
			return nil, err
		}
	}
	i := find(secs, secGlobal)
	if i < 0 {
		return nil, nil
	}
	r := bytes.NewReader(secs[i].body)
	count, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, errors.New("global section: bad count")
	}
	var out []global
	for g := range uint32(count) {
		t, _ := r.ReadByte()
		mut, _ := r.ReadByte()
		op, _ := r.ReadByte()
		if !(t == valI32 && op == 0x41) && !(t == valI64 && op == 0x42) {
			return nil, fmt.Errorf("global %d: type 0x%x initialised by opcode 0x%x, want an i32 or i64 constant", g, t, op)
		}
		v, err := readSLEB(r)
		if err != nil {
			return nil, fmt.Errorf("global %d: bad constant", g)
		}
		if end, _ := r.ReadByte(); end != 0x0b || mut > 1 {
			return nil, fmt.Errorf("global %d: initialiser is not one constant", g)
		}
		out = append(out, global{index: g, valType: t, mutable: mut == 1, init: v})
	}
	if r.Len() != 0 {
		return nil, errors.New("global section: bytes after the last global")
	}
	return out, nil
}

// exportGlobals returns a copy of the module that also exports each
// mutable global, so that wazero can read it after _initialize.
func exportGlobals(secs []section, globals []global) ([]byte, error) {
	i := find(secs, secExport)
	if i < 0 {
		return nil, errors.New("the module has no export section")
	}
	body := secs[i].body
	count, n := binary.Uvarint(body)
	if n <= 0 {
		return nil, errors.New("export section: bad count")
	}
	var added []byte
	for _, g := range globals {
		if !g.mutable {
			continue
		}
		name := globalExportPrefix + strconv.Itoa(int(g.index))
		added = binary.AppendUvarint(added, uint64(len(name)))
		added = append(added, name...)
		added = append(added, 3)
		added = binary.AppendUvarint(added, uint64(g.index))
		count++
	}
	probe := slices.Clone(secs)
	probe[i].body = append(append(binary.AppendUvarint(nil, count), body[n:]...), added...)
	return encodeModule(probe), nil
}

// runInitialize instantiates the module in wazero, calls _initialize, and
// returns the memory and the value of every mutable global afterwards.
func runInitialize(ctx context.Context, wasm []byte, globals []global) ([]byte, map[uint32]uint64, error) {
	// The interpreter: compiling all of the module costs more than running
	// its initialisation slowly.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var stderr bytes.Buffer
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithArgs("flowtrack").WithStderr(&stderr))
	if err != nil {
		return nil, nil, fmt.Errorf("instantiate the module: %w", err)
	}
	init := mod.ExportedFunction("_initialize")
	if init == nil {
		return nil, nil, errors.New("the module exports no _initialize (not a reactor)")
	}
	if _, err := init.Call(ctx); err != nil {
		return nil, nil, fmt.Errorf("_initialize: %w: %s", err, stderr.Bytes())
	}
	mem, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		return nil, nil, errors.New("read the memory")
	}
	values := make(map[uint32]uint64)
	for _, g := range globals {
		if !g.mutable {
			continue
		}
		v := mod.ExportedGlobal(globalExportPrefix + strconv.Itoa(int(g.index)))
		if v == nil {
			return nil, nil, fmt.Errorf("global %d is not exported", g.index)
		}
		values[g.index] = v.Get()
	}
	return slices.Clone(mem), values, nil
}

// snapshot rewrites the module's sections so that it starts as mem and
// values, and its _initialize does nothing.
func snapshot(secs []section, globals []global, mem []byte, values map[uint32]uint64) ([]byte, error) {
	out := slices.Clone(secs)
	// Memory: at least as many pages as initialisation left.
	i := find(out, secMemory)
	if i < 0 {
		return nil, errors.New("the module defines no memory")
	}
	r := bytes.NewReader(out[i].body)
	if count, err := binary.ReadUvarint(r); err != nil || count != 1 {
		return nil, errors.New("memory section: want exactly one memory")
	}
	flags, _ := r.ReadByte()
	if flags > 1 {
		return nil, fmt.Errorf("memory section: limits flag %d", flags)
	}
	if _, err := binary.ReadUvarint(r); err != nil {
		return nil, errors.New("memory section: bad minimum")
	}
	rest := out[i].body[len(out[i].body)-r.Len():] // the maximum, if any
	mb := append([]byte{1, flags}, binary.AppendUvarint(nil, uint64(len(mem)/65536))...)
	out[i].body = append(mb, rest...)

	// Globals: the values initialisation left.
	if len(globals) > 0 {
		g := binary.AppendUvarint(nil, uint64(len(globals)))
		for _, gl := range globals {
			v, mut, op := gl.init, byte(0), byte(0x41)
			if gl.mutable {
				v, mut = int64(values[gl.index]), 1
			}
			if gl.valType == valI32 {
				v = int64(int32(uint32(v)))
			} else {
				op = 0x42
			}
			g = append(g, gl.valType, mut, op)
			g = appendSLEB(g, v)
			g = append(g, 0x0b)
		}
		out[find(out, secGlobal)].body = g
	}

	// Data: the memory image, in segments of its non-zero runs.
	j := find(out, secData)
	segs := joinSegments(nonZeroRuns(mem), maxZeroGap)
	if j < 0 {
		return nil, errors.New("the module has no data section")
	}
	out[j].body = encodeSegments(segs)
	if k := find(out, secDataCnt); k >= 0 {
		out[k].body = binary.AppendUvarint(nil, uint64(len(segs)))
	}

	// _initialize: a new function that does nothing.
	if err := emptyInitialize(out); err != nil {
		return nil, err
	}
	return encodeModule(out), nil
}

// nonZeroRuns splits mem into segments of its non-zero bytes (runs of
// zeros shorter than a few bytes stay inside a segment; joinSegments
// joins the rest as it does for the linker's segments).
func nonZeroRuns(mem []byte) []segment {
	var segs []segment
	for p := 0; p < len(mem); {
		for p < len(mem) && mem[p] == 0 {
			p++
		}
		if p == len(mem) {
			break
		}
		start := p
		for zeros := 0; p < len(mem) && zeros < 8; p++ {
			if mem[p] == 0 {
				zeros++
			} else {
				zeros = 0
			}
		}
		end := p
		for end > start && mem[end-1] == 0 {
			end--
		}
		segs = append(segs, segment{offset: uint32(start), data: mem[start:end]})
	}
	return segs
}

// emptyInitialize adds a function of type [] → [] with an empty body and
// points the _initialize export at it.
func emptyInitialize(secs []section) error {
	ti, fi, ci, ei := find(secs, secType), find(secs, secFunction), find(secs, secCode), find(secs, secExport)
	if ti < 0 || fi < 0 || ci < 0 || ei < 0 {
		return errors.New("the module lacks a type, function, code or export section")
	}
	// The type [] → []: appended (a duplicate type is valid).
	types, n := binary.Uvarint(secs[ti].body)
	secs[ti].body = append(append(binary.AppendUvarint(nil, types+1), secs[ti].body[n:]...), 0x60, 0, 0)
	// Its function, after every defined one.
	funcs, n := binary.Uvarint(secs[fi].body)
	secs[fi].body = binary.AppendUvarint(append(binary.AppendUvarint(nil, funcs+1), secs[fi].body[n:]...), types)
	bodies, n := binary.Uvarint(secs[ci].body)
	if bodies != funcs {
		return fmt.Errorf("%d function bodies for %d functions", bodies, funcs)
	}
	secs[ci].body = append(append(binary.AppendUvarint(nil, bodies+1), secs[ci].body[n:]...), 2, 0, 0x0b)
	imported := uint64(0)
	if i := find(secs, secImport); i >= 0 {
		var err error
		if imported, err = importedFuncs(secs[i].body); err != nil {
			return err
		}
	}
	index := imported + funcs
	// Rewrite the export.
	r := bytes.NewReader(secs[ei].body)
	count, _ := binary.ReadUvarint(r)
	ex := binary.AppendUvarint(nil, count)
	found := false
	for range count {
		l, err := binary.ReadUvarint(r)
		if err != nil || l > uint64(r.Len()) {
			return errors.New("export section: bad name")
		}
		name := make([]byte, l)
		_, _ = r.Read(name)
		kind, _ := r.ReadByte()
		idx, err := binary.ReadUvarint(r)
		if err != nil {
			return errors.New("export section: truncated")
		}
		if string(name) == "_initialize" && kind == 0 {
			idx, found = index, true
		}
		ex = binary.AppendUvarint(ex, l)
		ex = append(ex, name...)
		ex = append(ex, kind)
		ex = binary.AppendUvarint(ex, idx)
	}
	if !found {
		return errors.New("the module exports no _initialize function")
	}
	secs[ei].body = ex
	return nil
}

// importedFuncs counts the function imports of an import section.
func importedFuncs(body []byte) (uint64, error) {
	r := bytes.NewReader(body)
	count, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, errors.New("import section: bad count")
	}
	var n uint64
	for range count {
		for range 2 {
			l, err := binary.ReadUvarint(r)
			if err != nil || l > uint64(r.Len()) {
				return 0, errors.New("import section: bad name")
			}
			_, _ = r.Seek(int64(l), 1)
		}
		kind, _ := r.ReadByte()
		if kind != 0 {
			return 0, fmt.Errorf("import section: import of kind %d; a Go module imports only functions", kind)
		}
		n++
		if _, err := binary.ReadUvarint(r); err != nil {
			return 0, errors.New("import section: truncated")
		}
	}
	return n, nil
}
