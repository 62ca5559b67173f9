package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// maxZeroGap is the longest run of zeros mergeData writes out to join two
// data segments; a longer gap keeps them apart.
const maxZeroGap = 64 << 10

// mergeData rewrites the module's data section so that data segments
// separated by at most maxZeroGap bytes become one, the gap written as
// zeros. Go's linker splits the data at every run of zeros longer than a
// segment header, up to 100,000 segments; each costs its header in the
// module (flowtrack: 0.8 MB, 172 KB of it after gzip) and a step per
// instantiation (about 4 ms of every wazero instantiation). Merged, the
// raw module grows by the zeros (about 1 MB), which compress to almost
// nothing. The memory image is the same byte for byte. Only what Go
// emits is accepted: active segments for memory 0 at i32.const offsets.
func mergeData(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("merge data segments: not a WebAssembly module")
	}
	type section struct {
		id   byte
		body []byte
	}
	var secs []section
	var segs []segment
	for p := 8; p < len(wasm); {
		id := wasm[p]
		size, n := binary.Uvarint(wasm[p+1:])
		if n <= 0 || size > uint64(len(wasm)-p-1-n) {
			return nil, fmt.Errorf("merge data segments: section %d at offset %d: bad size", id, p)
		}
		body := wasm[p+1+n : p+1+n+int(size)]
		p += 1 + n + int(size)
		if id == 11 {
			var err error
			if segs, err = dataSegments(body); err != nil {
				return nil, fmt.Errorf("merge data segments: %w", err)
			}
			segs = joinSegments(segs, maxZeroGap)
			body = encodeSegments(segs)
		}
		secs = append(secs, section{id, body})
	}
	out := slices.Clone(wasm[:8])
	for _, s := range secs {
		if s.id == 12 { // data count (Go emits none): it must match
			s.body = binary.AppendUvarint(nil, uint64(len(segs)))
		}
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(s.body)))
		out = append(out, s.body...)
	}
	return out, nil
}

// segment is an active data segment: bytes at an offset of memory 0.
type segment struct {
	offset uint32
	data   []byte
}

// dataSegments reads a data section.
func dataSegments(body []byte) ([]segment, error) {
	r := bytes.NewReader(body)
	count, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, errors.New("bad segment count")
	}
	segs := make([]segment, 0, min(count, uint64(len(body))))
	for i := range count {
		flag, err := binary.ReadUvarint(r)
		if err != nil || flag != 0 {
			return nil, fmt.Errorf("segment %d: flag %d, want 0 (active, memory 0)", i, flag)
		}
		if op, _ := r.ReadByte(); op != 0x41 {
			return nil, fmt.Errorf("segment %d: offset is not an i32.const", i)
		}
		off, err := readSLEB(r)
		if err != nil || off < -1<<31 || off > 1<<31-1 {
			return nil, fmt.Errorf("segment %d: bad i32 offset", i)
		}
		if end, _ := r.ReadByte(); end != 0x0b {
			return nil, fmt.Errorf("segment %d: offset expression is not one i32.const", i)
		}
		size, err := binary.ReadUvarint(r)
		if err != nil || size > uint64(r.Len()) {
			return nil, fmt.Errorf("segment %d: bad size", i)
		}
		data := make([]byte, size)
		_, _ = r.Read(data)
		segs = append(segs, segment{offset: uint32(int32(off)), data: data})
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d bytes after the last segment", r.Len())
	}
	return segs, nil
}

// joinSegments joins segments, in offset order, whose gap is at most
// maxGap bytes. Overlapping segments (which Go never emits) stay apart,
// so the later one still wins as the spec says.
func joinSegments(segs []segment, maxGap uint64) []segment {
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	var out []segment
	for _, s := range segs {
		if k := len(out) - 1; k >= 0 {
			end := uint64(out[k].offset) + uint64(len(out[k].data))
			if uint64(s.offset) >= end && uint64(s.offset)-end <= maxGap {
				out[k].data = append(append(out[k].data, make([]byte, uint64(s.offset)-end)...), s.data...)
				continue
			}
		}
		out = append(out, segment{offset: s.offset, data: slices.Clone(s.data)})
	}
	return out
}

// readSLEB reads a signed LEB128 number (wasm's, not Go's zigzag varint).
func readSLEB(r *bytes.Reader) (int64, error) {
	var v int64
	for shift := 0; shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, nil
		}
	}
	return 0, errors.New("LEB128 too long")
}

// appendSLEB appends v as a signed LEB128 number.
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// encodeSegments writes a data section's body.
func encodeSegments(segs []segment) []byte {
	b := binary.AppendUvarint(nil, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, 0x41)
		b = appendSLEB(b, int64(int32(s.offset)))
		b = append(b, 0x0b)
		b = binary.AppendUvarint(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}
