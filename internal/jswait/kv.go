package jswait

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KeyValue returns kv with its calls waiting out JetStream's transient
// states (Do) until their context ends; a call whose context has no
// deadline waits at most DefaultWait. Watchers and key listers are only
// made through it (what they deliver later is kv's), and live as long as
// the context they were made with, as kv's do.
//
// A Create or Update tried again after its first try landed unseen (its
// answer lost) finds its own write: "key exists" or "wrong last
// sequence". The key then holds the value the call wrote, at a revision
// after the one expected, and the call answers that revision as a
// success rather than the error, so a retried write is not reported as
// somebody else's. Put and Delete written twice hold the same value.
func KeyValue(kv jetstream.KeyValue) jetstream.KeyValue { return retryKV{kv} }

// DefaultWait bounds the waits of a call made without a deadline.
const DefaultWait = 30 * time.Second

type retryKV struct{ jetstream.KeyValue }

func do(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := Bound(ctx, DefaultWait)
	defer cancel()
	return Do(ctx, fn)
}

func (k retryKV) Get(ctx context.Context, key string) (e jetstream.KeyValueEntry, err error) {
	err = do(ctx, func(ctx context.Context) error { e, err = k.KeyValue.Get(ctx, key); return err })
	return e, err
}

func (k retryKV) GetRevision(ctx context.Context, key string, rev uint64) (e jetstream.KeyValueEntry, err error) {
	err = do(ctx, func(ctx context.Context) error { e, err = k.KeyValue.GetRevision(ctx, key, rev); return err })
	return e, err
}

func (k retryKV) Put(ctx context.Context, key string, value []byte) (rev uint64, err error) {
	err = do(ctx, func(ctx context.Context) error { rev, err = k.KeyValue.Put(ctx, key, value); return err })
	return rev, err
}

func (k retryKV) PutString(ctx context.Context, key string, value string) (uint64, error) {
	return k.Put(ctx, key, []byte(value))
}

// mine reports the revision of key when it holds value at a revision
// after since: a write of this call's that landed on an earlier try.
func (k retryKV) mine(ctx context.Context, key string, value []byte, since uint64) (uint64, bool) {
	e, err := k.Get(ctx, key)
	if err != nil || e.Operation() != jetstream.KeyValuePut || e.Revision() <= since || !bytes.Equal(e.Value(), value) {
		return 0, false
	}
	return e.Revision(), true
}

func (k retryKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (rev uint64, err error) {
	tries := 0
	err = do(ctx, func(ctx context.Context) error {
		tries++
		rev, err = k.KeyValue.Create(ctx, key, value, opts...)
		return err
	})
	if tries > 1 && errors.Is(err, jetstream.ErrKeyExists) {
		if r, ok := k.mine(ctx, key, value, 0); ok {
			return r, nil
		}
	}
	return rev, err
}

func (k retryKV) Update(ctx context.Context, key string, value []byte, last uint64) (rev uint64, err error) {
	tries := 0
	err = do(ctx, func(ctx context.Context) error {
		tries++
		rev, err = k.KeyValue.Update(ctx, key, value, last)
		return err
	})
	if tries > 1 && (errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)) {
		if r, ok := k.mine(ctx, key, value, last); ok {
			return r, nil
		}
	}
	return rev, err
}

func (k retryKV) Delete(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	return do(ctx, func(ctx context.Context) error { return k.KeyValue.Delete(ctx, key, opts...) })
}

func (k retryKV) Purge(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	return do(ctx, func(ctx context.Context) error { return k.KeyValue.Purge(ctx, key, opts...) })
}

// keep is do for the calls whose result lives on with their context (a
// watcher, a key lister: they stop when it ends): the calls are given
// the caller's context, and only the waiting between tries is bounded.
func keep(ctx context.Context, fn func(ctx context.Context) error) error {
	wctx, cancel := Bound(ctx, DefaultWait)
	defer cancel()
	return Do(wctx, func(context.Context) error { return fn(ctx) })
}

func (k retryKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (w jetstream.KeyWatcher, err error) {
	err = keep(ctx, func(ctx context.Context) error { w, err = k.KeyValue.Watch(ctx, keys, opts...); return err })
	return w, err
}

func (k retryKV) WatchAll(ctx context.Context, opts ...jetstream.WatchOpt) (w jetstream.KeyWatcher, err error) {
	err = keep(ctx, func(ctx context.Context) error { w, err = k.KeyValue.WatchAll(ctx, opts...); return err })
	return w, err
}

func (k retryKV) WatchFiltered(ctx context.Context, keys []string, opts ...jetstream.WatchOpt) (w jetstream.KeyWatcher, err error) {
	err = keep(ctx, func(ctx context.Context) error { w, err = k.KeyValue.WatchFiltered(ctx, keys, opts...); return err })
	return w, err
}

func (k retryKV) Keys(ctx context.Context, opts ...jetstream.WatchOpt) (keys []string, err error) {
	err = do(ctx, func(ctx context.Context) error { keys, err = k.KeyValue.Keys(ctx, opts...); return err })
	return keys, err
}

func (k retryKV) ListKeys(ctx context.Context, opts ...jetstream.WatchOpt) (l jetstream.KeyLister, err error) {
	err = keep(ctx, func(ctx context.Context) error { l, err = k.KeyValue.ListKeys(ctx, opts...); return err })
	return l, err
}

func (k retryKV) ListKeysFiltered(ctx context.Context, filters ...string) (l jetstream.KeyLister, err error) {
	err = keep(ctx, func(ctx context.Context) error { l, err = k.KeyValue.ListKeysFiltered(ctx, filters...); return err })
	return l, err
}

func (k retryKV) History(ctx context.Context, key string, opts ...jetstream.WatchOpt) (h []jetstream.KeyValueEntry, err error) {
	err = do(ctx, func(ctx context.Context) error { h, err = k.KeyValue.History(ctx, key, opts...); return err })
	return h, err
}

func (k retryKV) Status(ctx context.Context) (s jetstream.KeyValueStatus, err error) {
	err = do(ctx, func(ctx context.Context) error { s, err = k.KeyValue.Status(ctx); return err })
	return s, err
}
