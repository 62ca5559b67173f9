package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/flowtrack/flowtrack/api"
	bolt "go.etcd.io/bbolt"
)

// ErrDamaged is wrapped by Open's and Check's errors for a file that is
// not a bbolt database or is damaged: empty, shorter than its own pages,
// with no valid meta page, or one bbolt fails on. The file is left as it
// is, for the operator to restore a backup or inspect it.
var ErrDamaged = api.ErrStoreDamaged

// The bbolt file format read here (go.etcd.io/bbolt, format version 2):
// pages 0 and 1 are meta pages, written alternately; each is a 16-byte
// page header then the meta fields, native byte order (little-endian on
// every platform flowtrack supports), and an FNV-64a checksum of the
// fields before it.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSize       = 64 // magic ... txid, checksum
	metaPageFlag   = 0x04
	noFreelist     = ^uint64(0)
	minPageSize    = 512
	maxPageSize    = 1 << 16
)

// boltMeta is what a meta page says.
type boltMeta struct {
	pageSize       uint32
	root, freelist uint64
	pgid, txid     uint64
}

// readMeta reads the meta page at offset off of f and validates it as
// bbolt does when it picks a meta page: page flags, magic, version and
// checksum.
func readMeta(f io.ReaderAt, off int64) (boltMeta, error) {
	var b [pageHeaderSize + metaSize]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, fmt.Errorf("meta page at %d: %w", off, err)
	}
	le := binary.LittleEndian
	if flags := le.Uint16(b[8:]); flags&metaPageFlag == 0 {
		return boltMeta{}, fmt.Errorf("meta page at %d: page flags %#x are no meta page's", off, flags)
	}
	m := b[pageHeaderSize:]
	if magic := le.Uint32(m); magic != boltMagic {
		return boltMeta{}, fmt.Errorf("meta page at %d: magic %#x is not bbolt's", off, magic)
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("meta page at %d: format version %d, want %d", off, v, boltVersion)
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:56])
	if sum := le.Uint64(m[56:]); sum != h.Sum64() {
		return boltMeta{}, fmt.Errorf("meta page at %d: checksum mismatch", off)
	}
	return boltMeta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]),
		pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// check reports whether the pages m describes fit a file of size bytes:
// a page size bbolt can use, every page up to the high-water mark inside
// the file, the root and freelist pages below it.
func (m boltMeta) check(size int64) error {
	ps := uint64(m.pageSize)
	switch {
	case ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0:
		return fmt.Errorf("page size %d", ps)
	case m.pgid < 2 || m.pgid > uint64(size)/ps:
		return fmt.Errorf("the file has %d bytes, too short for its %d pages of %d bytes (truncated?)", size, m.pgid, ps)
	case m.root < 2 || m.root >= m.pgid:
		return fmt.Errorf("root page %d outside pages 2 to %d", m.root, m.pgid-1)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return fmt.Errorf("freelist page %d outside pages 2 to %d", m.freelist, m.pgid-1)
	}
	return nil
}

// verifyFile checks, before bbolt maps it, that the file at path is a
// bbolt database whose pages its size holds: bbolt reads a damaged or
// foreign file through its memory map and may crash the process. A file
// that does not exist is fine (Open creates it); an empty one is refused
// unless create is set, since bbolt would take it for a new store and
// hide that the file was emptied.
func verifyFile(path string, create bool) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && create {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	switch {
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ErrDamaged, path)
	case size == 0:
		return fmt.Errorf("%w: %s is empty (0 bytes); remove it to start a new store", ErrDamaged, path)
	case size < 2*minPageSize:
		return fmt.Errorf("%w: %s has %d bytes, fewer than two pages", ErrDamaged, path, size)
	}
	m0, err0 := readMeta(f, 0)
	var metas []boltMeta
	if err0 == nil {
		metas = append(metas, m0)
		if int64(m0.pageSize) < size {
			if m1, err := readMeta(f, int64(m0.pageSize)); err == nil {
				metas = append(metas, m1)
			}
		}
	} else {
		// Meta page 0 is bad: page 1, at a page size only it can tell.
		for ps := int64(minPageSize); ps <= maxPageSize && 2*ps <= size; ps *= 2 {
			if m1, err := readMeta(f, ps); err == nil && int64(m1.pageSize) == ps {
				metas = append(metas, m1)
				break
			}
		}
	}
	if len(metas) == 0 {
		return fmt.Errorf("%w: %s: no valid meta page: %v", ErrDamaged, path, err0)
	}
	// bbolt goes on from the valid meta page of the later transaction
	// (the other is the commit before it): that one must describe pages
	// the file holds.
	m := metas[0]
	if len(metas) == 2 && metas[1].txid > m.txid {
		m = metas[1]
	}
	if err := m.check(size); err != nil {
		return fmt.Errorf("%w: %s: meta page of transaction %d: %v", ErrDamaged, path, m.txid, err)
	}
	if m.freelist != noFreelist {
		if err := checkPage(f, m, m.freelist, freelistPageFlag); err != nil {
			return fmt.Errorf("%w: %s: freelist: %v", ErrDamaged, path, err)
		}
	}
	if err := checkPage(f, m, m.root, branchPageFlag|leafPageFlag); err != nil {
		return fmt.Errorf("%w: %s: root bucket: %v", ErrDamaged, path, err)
	}
	return nil
}

// Page flags of bbolt's page header.
const (
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
)

// checkPage checks the header of page id of the file m describes: it
// names itself, has one of the flags of want, and its overflow pages lie
// below the high-water mark.
func checkPage(f io.ReaderAt, m boltMeta, id uint64, want uint16) error {
	var b [pageHeaderSize]byte
	if _, err := f.ReadAt(b[:], int64(id)*int64(m.pageSize)); err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	le := binary.LittleEndian
	got, flags, overflow := le.Uint64(b[:]), le.Uint16(b[8:]), uint64(le.Uint32(b[12:]))
	switch {
	case got != id:
		return fmt.Errorf("page %d says it is page %d", id, got)
	case flags&want == 0:
		return fmt.Errorf("page %d has flags %#x, want %#x", id, flags, want)
	case id+overflow >= m.pgid:
		return fmt.Errorf("page %d runs %d pages past the high-water mark %d", id, overflow, m.pgid)
	}
	return nil
}

// guard runs f, turning a panic inside bbolt, or a memory fault on its
// map of a damaged file, into an error wrapping ErrDamaged. It must run
// on the goroutine that calls into bbolt: SetPanicOnFault is per
// goroutine. It is the last line: a bbolt.Open that panics midway keeps
// its file handle (and lock) until the garbage collector finalizes it,
// which is why verifyFile refuses what it can before bbolt runs.
func guard(what string, f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v", ErrDamaged, what, r)
		}
	}()
	return f()
}

// Check verifies the store file at path without changing it: the checks
// Open makes before mapping the file, then bbolt's consistency check of
// every page (Tx.Check: no page referenced twice or never, no page past
// the end, keys in order). It opens the file read-only, waiting for
// another process that holds it for opts.LockTimeout. It returns every
// problem found, or nil for a sound file.
//
// # Errors
//
// An error wrapping ErrDamaged for a file that is no bbolt database or
// that bbolt cannot read at all; the file's error (absent, unreadable,
// held by another process).
func Check(path string, opts *Options) (problems []error, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = time.Second
	}
	if err := verifyFile(path, false); err != nil {
		return nil, fmt.Errorf("boltstore: check %s: %w", path, err)
	}
	err = guard("check "+path, func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.LockTimeout, ReadOnly: true})
		if err != nil {
			return err
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error {
			for e := range tx.Check() {
				problems = append(problems, e)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: check %s: %w", path, err)
	}
	return problems, nil
}
