package main

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// dataModule is a module with only a memory and a data section holding
// segs; withCount adds a data count section.
func dataModule(segs []segment, withCount bool) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, 5, 3, 1, 0, 2) // memory section: one memory, min 2 pages
	if withCount {
		m = append(m, 12, 1, byte(len(segs)))
	}
	body := encodeSegments(segs)
	m = append(m, 11)
	m = binary.AppendUvarint(m, uint64(len(body)))
	return append(m, body...)
}

// sectionBody returns the body of the module's section id.
func sectionBody(t *testing.T, wasm []byte, id byte) []byte {
	t.Helper()
	secs, err := sections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	i := find(secs, id)
	if i < 0 {
		t.Fatalf("no section %d", id)
	}
	return secs[i].body
}

// image is the memory the module's data segments write, and their count.
func image(t *testing.T, wasm []byte) ([]byte, int) {
	t.Helper()
	segs, err := dataSegments(sectionBody(t, wasm, 11))
	if err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, 1<<17)
	for _, s := range segs {
		copy(mem[s.offset:], s.data)
	}
	return mem, len(segs)
}

func TestMergeData(t *testing.T) {
	segs := []segment{
		{offset: 70000, data: []byte("late")}, // out of order
		{offset: 1024, data: []byte("abc")},
		{offset: 1035, data: []byte("defgh")}, // 8 zeros after abc
		{offset: 1040 + maxZeroGap + 1, data: []byte("far")},
	}
	in := dataModule(segs, true)
	out, err := mergeData(in)
	if err != nil {
		t.Fatal(err)
	}
	before, n := image(t, in)
	after, m := image(t, out)
	if n != 4 || m != 2 {
		t.Errorf("segments %d -> %d, want 4 -> 2 (the far one stays apart)", n, m)
	}
	if !bytes.Equal(before, after) {
		t.Error("merged segments write another memory image")
	}
	if c := sectionBody(t, out, 12); !bytes.Equal(c, []byte{2}) {
		t.Errorf("data count = % x, want 02", c)
	}
	if again, _ := mergeData(out); !bytes.Equal(again, out) {
		t.Error("merging twice changes the module: the build would not be reproducible")
	}
}

func TestMergeDataNegativeOffset(t *testing.T) {
	// Offsets past 2 GiB are negative i32.const values.
	segs := []segment{{offset: 0x8000_0000, data: []byte("x")}, {offset: 0x8000_0002, data: []byte("y")}}
	out, err := mergeData(dataModule(segs, false))
	if err != nil {
		t.Fatal(err)
	}
	got, err := dataSegments(sectionBody(t, out, 11))
	if err != nil || len(got) != 1 || got[0].offset != 0x8000_0000 || string(got[0].data) != "x\x00y" {
		t.Errorf("got %+v, %v; want one segment x\\0y at 0x80000000", got, err)
	}
}

func TestMergeDataRejects(t *testing.T) {
	passive := []byte("\x00asm\x01\x00\x00\x00\x0b\x04\x01\x01\x01z")
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("hello, world"), "not a WebAssembly module"},
		{"passive segment", passive, "want 0 (active, memory 0)"},
		{"truncated", dataModule([]segment{{offset: 8, data: []byte("abc")}}, false)[:20], "bad size"},
	} {
		if _, err := mergeData(tc.wasm); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
