package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowtrack/flowtrack/host"
)

// openState returns an engine in the state the state file holds. A file
// that does not exist is a fresh engine when create is set (deploy starts
// a state file) and an error otherwise; a file that is not a state
// document is an error naming the file and what is wrong. All errors wrap
// errInput.
func openState(ctx context.Context, file string, create bool) (*host.Engine, error) {
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		return host.New(ctx)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: state file %s does not exist (deploy a model to start one)", errInput, file)
	case err != nil:
		return nil, fmt.Errorf("%w: state file: %v", errInput, err)
	case len(data) == 0:
		return nil, fmt.Errorf("%w: state file %s is empty", errInput, file)
	}
	var doc json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: state file %s: not JSON at byte %d: %v", errInput, file, se.Offset, err)
		}
		return nil, fmt.Errorf("%w: state file %s: not JSON: %v", errInput, file, err)
	}
	e, err := host.New(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.Restore(ctx, data); err != nil {
		_ = e.Close(ctx)
		return nil, fmt.Errorf("%w: state file %s: %w", errInput, file, err)
	}
	return e, nil
}

// saveState writes e's state document to file atomically: to a temporary
// file in the same directory, synced, then renamed over file, so a reader
// or a crash sees the old document or the new one, never half of one. An
// existing file keeps its permissions; a new one is private (0600), since
// the document holds process variables.
func saveState(ctx context.Context, e *host.Engine, file string) error {
	data, err := e.Checkpoint(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := writeAtomic(file, data); err != nil {
		return fmt.Errorf("%w: write state file %s: %w", errInput, file, err)
	}
	return nil
}

func writeAtomic(file string, data []byte) (err error) {
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
