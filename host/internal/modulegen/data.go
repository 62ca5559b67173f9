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
	secs, err := sections(wasm)
	if err != nil {
		return nil, fmt.Errorf("merge data segments: %w", err)
	}
	var segs []segment
	if i := find(secs, secData); i >= 0 {
		if segs, err = dataSegments(secs[i].body); err != nil {
			return nil, fmt.Errorf("merge data segments: %w", err)
		}
		segs = joinSegments(segs, maxZeroGap)
		secs[i].body = encodeSegments(segs)
	}
	if i := find(secs, secDataCnt); i >= 0 { // Go emits none; it must match
		secs[i].body = binary.AppendUvarint(nil, uint64(len(segs)))
	}
	return encodeModule(secs), nil
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
