package bpmnxml

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// charsetReader decodes the single-byte encodings BPMN tools still declare
// (ISO-8859-1 and Windows-1252) into UTF-8. encoding/xml handles UTF-8 and
// US-ASCII itself and calls this for anything else.
//
// # Why not golang.org/x/text?
//
// Two small tables cover every encoding seen in real models; a dependency
// for them would be larger than the code.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1":
		return &singleByteReader{r: bufio.NewReader(input)}, nil
	case "windows-1252", "cp1252", "x-cp1252":
		return &singleByteReader{r: bufio.NewReader(input), cp1252: true}, nil
	}
	return nil, fmt.Errorf("unsupported character encoding %q", label)
}

// cp1252High maps Windows-1252 bytes 0x80..0x9F to runes; the rest of the
// code page equals ISO-8859-1.
var cp1252High = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}

// singleByteReader converts a single-byte encoded stream to UTF-8.
type singleByteReader struct {
	r       *bufio.Reader
	cp1252  bool
	pending []byte
}

// Read implements io.Reader.
func (s *singleByteReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.pending) > 0 {
			c := copy(p[n:], s.pending)
			s.pending = s.pending[c:]
			n += c
			continue
		}
		b, err := s.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		r := rune(b)
		if s.cp1252 && b >= 0x80 && b <= 0x9F {
			r = cp1252High[b-0x80]
		}
		var buf [utf8.UTFMax]byte
		s.pending = buf[:utf8.EncodeRune(buf[:], r)]
	}
	return n, nil
}
