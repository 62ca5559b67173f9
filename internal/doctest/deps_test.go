package doctest

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/flowtrack/flowtrack"

// rule is one line of docs/ARCHITECTURE.md's "Dependency rules": no
// package matching from may depend, directly or not, on a package
// matching to.
type rule struct {
	from, to []string // package paths relative to the module; "x/..." matches x and below
	why      string
}

// rules are the dependency rules of docs/ARCHITECTURE.md, in its order.
var rules = []rule{
	{[]string{"engine/internal/model"}, []string{"engine/internal/runtime", "engine/internal/bpmnxml"},
		"definitions are format- and execution-free"},
	{[]string{"engine/internal/runtime/..."}, []string{"engine/internal/bpmnxml"},
		"the runtime runs definitions, whatever format they came from"},
	{[]string{"engine/internal/eventhub"}, []string{"engine/internal/runtime"},
		"producers never touch tracks: the hub calls back through an interface it defines"},
	{[]string{"engine/internal/..."}, []string{"engine"},
		"the engine's parts sit below its public package"},
	{[]string{"engine/..."}, []string{"wasm/...", "host/...", "server/...", "client/...", "cluster/..."},
		"the engine runs in every host, so it imports none of them"},
	{[]string{"internal/wire/...", "internal/dispatch/...", "internal/jsontext/..."}, []string{"host/...", "server/...", "client/...", "cluster/..."},
		"the wire contract sits below every surface that speaks it"},
	{[]string{"client/..."}, []string{"server/...", "cluster/..."},
		"a client speaks the subjects; it links no server"},
	{[]string{"api/..."}, []string{"*"},
		"api is the leaf every surface speaks: the standard library only"},
	{[]string{"worker/...", "internal/value/..."}, []string{"engine", "engine/internal/...", "host/...", "client/...", "server/...", "cluster/..."},
		"the job-worker loop and the value model sit below every surface, the native engine included"},
	{[]string{"internal/wire/...", "client/...", "host/..."}, []string{"engine/..."},
		"the wire codec, a client and the Go host speak api: a client or host binary links no native engine"},
}

// matches reports whether the package path rel (relative to the module)
// matches one of the patterns; "*" matches every package of the module.
func matches(rel string, patterns []string) bool {
	for _, p := range patterns {
		if p == "*" {
			return true
		}
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == base || strings.HasPrefix(rel, base+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// TestDependencyRules checks every rule of docs/ARCHITECTURE.md against
// the dependencies `go list -deps` gives each package of the module
// (test-only imports excluded: a test may reach up to drive what it
// tests). The wasm module's own rule, no NATS inside it, is make vet's.
func TestDependencyRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue // the module root has no package
		}
		deps[pkg] = nil
		for _, d := range fields[1:] {
			if rel, ok := strings.CutPrefix(d, module+"/"); ok {
				deps[pkg] = append(deps[pkg], rel)
			}
		}
	}
	for _, must := range []string{"api", "worker", "internal/value", "internal/wire", "engine", "engine/internal/model", "engine/internal/runtime", "engine/internal/eventhub", "host", "client"} {
		if _, ok := deps[must]; !ok {
			t.Fatalf("go list did not list %s: the rules below would check nothing", must)
		}
	}
	pkgs := make([]string, 0, len(deps))
	for p := range deps {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, r := range rules {
		for _, p := range pkgs {
			if !matches(p, r.from) {
				continue
			}
			for _, d := range deps[p] {
				if matches(d, r.to) {
					t.Errorf("%s depends on %s: %s (docs/ARCHITECTURE.md)", p, d, r.why)
				}
			}
		}
	}
}

// TestDependencyRules_Match holds the pattern matcher to what the rules
// above mean by their patterns.
func TestDependencyRules_Match(t *testing.T) {
	for _, c := range []struct {
		rel     string
		pattern string
		want    bool
	}{
		{"engine", "engine", true},
		{"engine/clock", "engine", false},
		{"engine/clock", "engine/...", true},
		{"engine", "engine/...", true},
		{"enginex", "engine/...", false},
		{"host/extism", "host/...", true},
		{"cmd/flowtrack", "host/...", false},
		{"engine/clock", "*", true},
	} {
		if got := matches(c.rel, []string{c.pattern}); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.rel, c.pattern, got, c.want)
		}
	}
}
