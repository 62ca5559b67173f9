package main

import (
	"context"
	"errors"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"

	"github.com/flowtrack/flowtrack/engine/boltstore"
)

// storeUsage is the usage of the store commands.
const storeUsage = "  flowtrack store check FILE\n"

// storeCmd runs "flowtrack store check FILE": the checks of a store file
// (engine/boltstore, the file of engine.WithStore) that Open makes
// before mapping it, then bbolt's consistency check of every page. It
// prints "FILE: ok" or each problem, one a line, and exits 0 for a
// sound file, 1 for a damaged one, 2 for a file it cannot read. It opens
// the file read-only and changes nothing; a file an engine holds open
// is waited for for a second.
func storeCmd(_ context.Context, args []string, stdout io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "check" {
		return exitUsage, usageError{"store needs a subcommand: check FILE"}
	}
	fs := flag.NewFlagSet("store check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 1 {
		return exitUsage, usageError{fmt.Sprintf("store check needs exactly one file, got %d", len(pos))}
	}
	path := pos[0]
	problems, err := boltstore.Check(path, nil)
	switch {
	case errors.Is(err, boltstore.ErrDamaged):
		return exitProcess, err
	case err != nil:
		return exitUsage, fmt.Errorf("%w: %w", errInput, err)
	}
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "%s: ok\n", path)
		return exitOK, nil
	}
	for _, p := range problems {
		fmt.Fprintf(stdout, "%s: %v\n", path, p)
	}
	return exitProcess, fmt.Errorf("%s: %d problems found by the consistency check", path, len(problems))
}
