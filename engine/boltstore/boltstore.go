// Package boltstore is flowtrack's embedded store: an engine's state in one
// local file, through bbolt, with no server to run. Open the file and hand
// it to engine.WithStore; a second engine opened on the file resumes what
// it holds (see Example).
//
// The file holds six buckets: "engine" (the engine-level document under
// the key "state", the message buffer under "messages"), "deployments" (one document per deployment, by an
// 8-byte big-endian sequence number), "instances" (one document without
// history per live instance, by its 8-byte big-endian key), "history"
// (an instance's history chunks, by its key followed by the 8-byte
// big-endian index of the chunk's first record), "finished" (the
// documents of finished instances still findable, by an 8-byte big-endian
// sequence number, oldest first) and "finishedKeys" (that number by
// instance key). The documents are the pieces of the state document of
// engine/STATE.md.
//
// It is a native package: the WebAssembly module does not import it.
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketEngine      = []byte("engine")
	bucketDeployments = []byte("deployments")
	bucketInstances   = []byte("instances")
	bucketHistory     = []byte("history")
	bucketFinished    = []byte("finished")
	bucketFinishedKey = []byte("finishedKeys")
	keyState          = []byte("state")
	keyMessages       = []byte("messages")
)

// Options configure Open. The zero value (or nil) is the durable default.
type Options struct {
	// NoSync skips the sync of each commit (bbolt's NoSync): a commit is
	// handed to the operating system but not forced to the disk, so a
	// crash of the process loses nothing, while a crash of the machine
	// or a power loss may lose the last commits or damage the file. For
	// tests and for work that can be redone; the default syncs.
	NoSync bool
	// LockTimeout is how long Open waits for another process holding the
	// file to let it go; the default is one second. A file is used by
	// one engine at a time.
	LockTimeout time.Duration
}

// Store is an engine.Store in one bbolt file. It is safe for concurrent
// use; an engine commits to it from one goroutine.
type Store struct {
	db *bolt.DB
}

var _ engine.Store = (*Store)(nil)

// Open opens the store in the file at path, creating it if needed.
//
// # Errors
//
// The file's error (a file another process holds fails after
// LockTimeout); one wrapping ErrDamaged for a file that is not a bbolt
// database or is damaged (checked before bbolt maps it: its meta pages
// and its size; a panic or memory fault inside bbolt is caught too), and
// for an empty file: bbolt would take it for a new store, hiding that
// the file was emptied. A file that does not exist is created.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = time.Second
	}
	if err := verifyFile(path, true); err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	var db *bolt.DB
	err := guard("open "+path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: o.LockTimeout, NoSync: o.NoSync, FreelistType: bolt.FreelistMapType})
		if err != nil {
			return err
		}
		return db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketEngine, bucketDeployments, bucketInstances, bucketHistory, bucketFinished, bucketFinishedKey} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		if db != nil {
			_ = guard("close "+path, db.Close)
		}
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file. Close the engine first.
func (s *Store) Close() error { return s.db.Close() }

// Load returns everything the file holds.
func (s *Store) Load(ctx context.Context) (*engine.StoreState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := &engine.StoreState{Instances: map[int64]*engine.StoredInstance{}}
	err := guard("load", func() error { return s.load(st) })
	if err != nil {
		return nil, fmt.Errorf("boltstore: load: %w", err)
	}
	return st, nil
}

// load reads everything the file holds into st.
func (s *Store) load(st *engine.StoreState) error {
	return s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketEngine).Get(keyState); v != nil {
			st.Engine = append([]byte(nil), v...)
		}
		if v := tx.Bucket(bucketEngine).Get(keyMessages); v != nil {
			st.Messages = append([]byte(nil), v...)
		}
		err := tx.Bucket(bucketDeployments).ForEach(func(_, v []byte) error {
			st.Deployments = append(st.Deployments, append([]byte(nil), v...))
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketFinished).ForEach(func(_, v []byte) error {
			st.Finished = append(st.Finished, append([]byte(nil), v...))
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketInstances).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("instance key %x is not 8 bytes", k)
			}
			st.Instances[int64(binary.BigEndian.Uint64(k))] = &engine.StoredInstance{Doc: append([]byte(nil), v...)}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketHistory).ForEach(func(k, v []byte) error {
			if len(k) != 16 {
				return fmt.Errorf("history key %x is not 16 bytes", k)
			}
			key := int64(binary.BigEndian.Uint64(k))
			si := st.Instances[key]
			if si == nil {
				return fmt.Errorf("history of instance %d, which the file does not hold", key)
			}
			si.History = append(si.History, engine.HistoryChunk{From: int(binary.BigEndian.Uint64(k[8:])), Records: append([]byte(nil), v...)})
			return nil
		})
	})
}

// Instance returns the document and history of one instance.
func (s *Store) Instance(ctx context.Context, key int64) (*engine.StoredInstance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var si *engine.StoredInstance
	err := guard("read", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			k := keyOf(uint64(key))
			v := tx.Bucket(bucketInstances).Get(k)
			if v == nil {
				return nil
			}
			si = &engine.StoredInstance{Doc: append([]byte(nil), v...)}
			c := tx.Bucket(bucketHistory).Cursor()
			for hk, hv := c.Seek(k); hk != nil && bytes.HasPrefix(hk, k); hk, hv = c.Next() {
				si.History = append(si.History, engine.HistoryChunk{From: int(binary.BigEndian.Uint64(hk[8:])), Records: append([]byte(nil), hv...)})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: instance %d: %w", key, err)
	}
	if si == nil {
		return nil, fmt.Errorf("boltstore: instance %d: %w", key, engine.ErrUnknownInstance)
	}
	return si, nil
}

// Commit writes b in one transaction (one sync unless NoSync).
func (s *Store) Commit(ctx context.Context, b *engine.StoreBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.Engine == nil {
		return engine.ErrNoEngineDocument
	}
	err := guard("commit", func() error { return s.commit(b) })
	if err != nil {
		return fmt.Errorf("boltstore: commit: %w", err)
	}
	return nil
}

// commit writes b in one transaction.
func (s *Store) commit(b *engine.StoreBatch) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketEngine).Put(keyState, b.Engine); err != nil {
			return fmt.Errorf("engine document: %w", err)
		}
		if b.Messages != nil {
			if err := tx.Bucket(bucketEngine).Put(keyMessages, b.Messages); err != nil {
				return fmt.Errorf("message buffer: %w", err)
			}
		}
		deps := tx.Bucket(bucketDeployments)
		for _, d := range b.Deployments {
			seq, err := deps.NextSequence()
			if err != nil {
				return err
			}
			if err := deps.Put(keyOf(seq), d); err != nil {
				return fmt.Errorf("deployment %d: %w", seq, err)
			}
		}
		insts := tx.Bucket(bucketInstances)
		keys := make([]int64, 0, len(b.Put))
		for key := range b.Put {
			keys = append(keys, key)
		}
		slices.Sort(keys) // bbolt fills pages best in key order
		for _, key := range keys {
			if err := insts.Put(keyOf(uint64(key)), b.Put[key]); err != nil {
				return fmt.Errorf("instance %d: %w", key, err)
			}
		}
		hist := tx.Bucket(bucketHistory)
		keys = keys[:0]
		for key := range b.History {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			c := b.History[key]
			if err := hist.Put(append(keyOf(uint64(key)), keyOf(uint64(c.From))...), c.Records); err != nil {
				return fmt.Errorf("instance %d history from record %d: %w", key, c.From, err)
			}
		}
		fin, finKeys := tx.Bucket(bucketFinished), tx.Bucket(bucketFinishedKey)
		evict := func(key int64) error {
			k := keyOf(uint64(key))
			if seq := finKeys.Get(k); seq != nil {
				if err := fin.Delete(seq); err != nil {
					return fmt.Errorf("finished instance %d: %w", key, err)
				}
				return finKeys.Delete(k)
			}
			return nil
		}
		for _, f := range b.Finished {
			if err := evict(f.Key); err != nil { // written again after a failed commit
				return err
			}
			seq, err := fin.NextSequence()
			if err != nil {
				return err
			}
			if err := fin.Put(keyOf(seq), f.Doc); err != nil {
				return fmt.Errorf("finished instance %d: %w", f.Key, err)
			}
			if err := finKeys.Put(keyOf(uint64(f.Key)), keyOf(seq)); err != nil {
				return fmt.Errorf("finished instance %d: %w", f.Key, err)
			}
		}
		for _, key := range b.Evict {
			if err := evict(key); err != nil {
				return err
			}
		}
		for _, key := range b.Delete {
			k := keyOf(uint64(key))
			if err := insts.Delete(k); err != nil {
				return fmt.Errorf("instance %d: %w", key, err)
			}
			c := hist.Cursor()
			for hk, _ := c.Seek(k); hk != nil && bytes.HasPrefix(hk, k); hk, _ = c.Seek(k) {
				if err := c.Delete(); err != nil {
					return fmt.Errorf("instance %d history: %w", key, err)
				}
			}
		}
		return nil
	})
}

// keyOf is the 8-byte big-endian key of n, so keys sort as numbers.
func keyOf(n uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], n)
	return k[:]
}
