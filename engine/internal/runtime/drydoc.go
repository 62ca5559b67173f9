package runtime

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// A dehydrated instance keeps its state document (InstDoc) as JSON
// compressed with DEFLATE primed by dryDict: most of a small document is
// field names, event types and times that every document repeats, which a
// preset dictionary turns into back-references (a message-catch instance:
// about 950 bytes of JSON, 100 compressed; 320 without the dictionary).
// The dictionary only needs to be the same for writing and reading in
// one process: dehydrated documents live in memory, never on disk.

// dryDict is the preset dictionary: a document's usual text, the most
// common last (DEFLATE finds nearer matches with shorter codes).
const dryDict = `"subscriptions":[{"id":,"kind":"timer","kind":"signal","token":1,"handler":"","scope":,"due":"","period":,"left":,"held":true,"gone":true}],` +
	`"joins":[{"scope":0,"element":"","arrived":[[]],"fired":true}],"jobs":[{"job":{"key":,"type":"","processId":"","elementId":"","instanceKey":,` +
	`"retries":3,"headers":{},"variables":{},"errorMessage":"","created":"2026-01-01T00:00:00Z"},"token":1,"incident":}],` +
	`"incidents":[{"incident":{"key":,"instanceKey":,"elementId":"","jobKey":,"message":""},"token":1,"reported":true,"held":[]}],` +
	`"startKey":"","parent":,"parentToken":,"depth":,"heldBy":,"inner":true,"multi":{"items":[],"count":,"started":,"active":,"completed":,"results":[],"met":true},` +
	`"locals":{},"atJoin":true,"child":,"boundary":[],"report":{"kind":"arrive","kind":"job","kind":"incident","element":"","flow":""},"iteration":,` +
	`"interrupted":true,"done":true,"detached":true,` +
	`{"at":"2026-01-01T00:00:00Z","type":"jobCreated","element":"","token":1,"jobKey":,"jobType":""},` +
	`{"at":"2026-01-01T00:00:00Z","type":"timerScheduled","element":"","token":1,"due":"2026-01-01T00:00:00Z"},` +
	`{"at":"2026-01-01T00:00:00Z","type":"signalSubscribed","element":"","token":1,"name":""},` +
	`{"at":"2026-01-01T00:00:00Z","type":"elementCompleted","element":"","token":1},` +
	`{"key":,"processKey":1,"process":"","state":"active","nextToken":1,"nextScope":0,"lastElement":"","scopes":[{"id":0,"parent":-1,"variables":{},"live":1}],` +
	`"tokens":[{"id":1,"element":"","scope":0,"wait":"message","wait":"job","wait":"timer","subscriptions":[],"track":{"element":"","flow":"","at":"waitState"}}],` +
	`"subscriptions":[{"id":,"kind":"message","token":1,"catch":"","correlationKey":""}],` +
	`"history":[{"at":"2026-01-01T00:00:00Z","type":"instanceStarted","variables":{}},{"at":"2026-01-01T00:00:00Z","type":"elementEntered","element":"","token":1},` +
	`{"at":"2026-01-01T00:00:00Z","type":"elementLeft","element":"","token":1},{"at":"2026-01-01T00:00:00Z","type":"flowTaken","flow":"","token":1},` +
	`{"at":"2026-01-01T00:00:00Z","type":"elementEntered","element":"","token":1},` +
	`{"at":"2026-01-01T00:00:00Z","type":"messageSubscribed","element":"","token":1,"name":"","correlationKey":""}]}`

// The compressors and decompressors are reused: a fresh DEFLATE writer
// allocates most of a megabyte, a reader about 40 KB. They are kept in
// free lists of a few rather than a sync.Pool, which every garbage
// collection empties: dehydrating many instances allocates enough to
// collect often, and each collection would cost a megabyte per writer.
var (
	dryWriters = make(chan *flate.Writer, 8)
	dryReaders = make(chan io.ReadCloser, 8) // implementing flate.Resetter
	dryBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// give puts x back in free list c, or drops it when c is full.
func give[T any](c chan T, x T) {
	select {
	case c <- x:
	default:
	}
}

// encodeDry writes d as a dehydrated instance keeps it.
func encodeDry(d *InstDoc) ([]byte, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	buf := dryBuffers.Get().(*bytes.Buffer)
	defer dryBuffers.Put(buf)
	buf.Reset()
	var w *flate.Writer
	select {
	case w = <-dryWriters:
		w.Reset(buf)
	default:
		if w, err = flate.NewWriterDict(buf, flate.DefaultCompression, []byte(dryDict)); err != nil {
			return nil, err
		}
	}
	defer give(dryWriters, w)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil // exactly its size: it is kept
}

// decodeDry reads what encodeDry wrote, numbers as their JSON text
// (InstDoc.exactNumbers brings them back to the value model).
func decodeDry(data []byte, d any) error {
	var r io.ReadCloser
	select {
	case r = <-dryReaders:
		if err := r.(flate.Resetter).Reset(bytes.NewReader(data), []byte(dryDict)); err != nil {
			return err
		}
	default:
		r = flate.NewReaderDict(bytes.NewReader(data), []byte(dryDict))
	}
	defer give(dryReaders, r)
	buf := dryBuffers.Get().(*bytes.Buffer)
	defer dryBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r); err != nil {
		return fmt.Errorf("decompress: %w", err)
	}
	dec := json.NewDecoder(buf)
	dec.UseNumber()
	return dec.Decode(d)
}
