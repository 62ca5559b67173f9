package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowtrack/flowtrack/host"
)

// errStateChanged is a state file that another invocation changed while
// this one ran: writing it would lose that invocation's work.
var errStateChanged = errors.New("the state file changed while this command ran (another flowtrack on it?); nothing was written")

// stateFile is a state file as a command read it.
type stateFile struct {
	path string
	// read is the document the command started from, nil if there was no
	// file.
	read []byte
}

// openState returns an engine in the state the state file holds. A file
// that does not exist is a fresh engine when create is set (deploy starts
// a state file) and an error otherwise; a file that is not a state
// document is an error naming the file and what is wrong. All errors wrap
// errInput.
func openState(ctx context.Context, file string, create bool) (*host.Engine, *stateFile, error) {
	e, data, err := restoreFile(ctx, file, create)
	return e, &stateFile{path: file, read: data}, err
}

func restoreFile(ctx context.Context, file string, create bool) (*host.Engine, []byte, error) {
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		e, err := host.New(ctx)
		return e, nil, err
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%w: state file %s does not exist (deploy a model to start one)", errInput, file)
	case err != nil:
		return nil, nil, fmt.Errorf("%w: state file: %v", errInput, err)
	case len(data) == 0:
		return nil, nil, fmt.Errorf("%w: state file %s is empty", errInput, file)
	}
	var doc json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("%w: state file %s: not JSON at byte %d: %v", errInput, file, se.Offset, err)
		}
		return nil, nil, fmt.Errorf("%w: state file %s: not JSON: %v", errInput, file, err)
	}
	e, err := host.New(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := e.Restore(ctx, data); err != nil {
		_ = e.Close(ctx)
		return nil, nil, fmt.Errorf("%w: state file %s: %w", errInput, file, err)
	}
	return e, data, nil
}

// save writes e's state document to the file atomically: to a temporary
// file in the same directory, synced, then renamed over the file, so a
// reader or a crash sees the old document or the new one, never half of
// one. An existing file keeps its permissions; a new one is private
// (0600), since the document holds process variables.
//
// It refuses (errStateChanged) when the file no longer holds what the
// command read: a second invocation that overlapped this one is reported
// instead of silently undone. The check and the rename are not one
// atomic step, so invocations that overlap within that instant are not
// caught.
func (f *stateFile) save(ctx context.Context, e *host.Engine) error {
	data, err := e.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := writeAtomic(f.path, data, func() error {
		now, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) && f.read == nil {
			return nil
		}
		if err != nil || !bytes.Equal(now, f.read) {
			return errStateChanged
		}
		return nil
	}); err != nil {
		if errors.Is(err, errStateChanged) {
			return fmt.Errorf("state file %s: %w", f.path, err)
		}
		return fmt.Errorf("%w: write state file %s: %w", errInput, f.path, err)
	}
	return nil
}

// writeAtomic writes data to file through a temporary file; check runs
// just before the rename, and its error stops it.
func writeAtomic(file string, data []byte, check func() error) (err error) {
	dir := filepath.Dir(file)
	f, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if st, statErr := os.Stat(file); statErr == nil {
		if err = f.Chmod(st.Mode().Perm()); err != nil {
			return err
		}
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = check(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), file); err != nil {
		return err
	}
	// The rename is durable once the directory is synced; not every
	// platform can sync a directory, and the document is whole either way.
	if d, dirErr := os.Open(dir); dirErr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
