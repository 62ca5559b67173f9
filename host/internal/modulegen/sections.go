package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Section ids of the WebAssembly binary format.
const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secMemory   = 5
	secGlobal   = 6
	secExport   = 7
	secCode     = 10
	secData     = 11
	secDataCnt  = 12
)

// section is one section of a module: its id and body.
type section struct {
	id   byte
	body []byte
}

// sections splits a module into its sections.
func sections(wasm []byte) ([]section, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module")
	}
	var secs []section
	for p := 8; p < len(wasm); {
		id := wasm[p]
		size, n := binary.Uvarint(wasm[p+1:])
		if n <= 0 || size > uint64(len(wasm)-p-1-n) {
			return nil, fmt.Errorf("section %d at offset %d: bad size", id, p)
		}
		secs = append(secs, section{id, wasm[p+1+n : p+1+n+int(size)]})
		p += 1 + n + int(size)
	}
	return secs, nil
}

// encodeModule joins sections into a module.
func encodeModule(secs []section) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range secs {
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(s.body)))
		out = append(out, s.body...)
	}
	return out
}

// find returns the index of the section with id, or -1.
func find(secs []section, id byte) int {
	return slices.IndexFunc(secs, func(s section) bool { return s.id == id })
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
