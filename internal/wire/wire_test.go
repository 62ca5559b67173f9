package wire

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/api"
)

// abi returns the text of section heading (up to the next heading of the
// same or a higher level) of wasm/ABI.md.
func abi(t *testing.T, heading string) string {
	t.Helper()
	doc, err := os.ReadFile("../../wasm/ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("ABI.md has no section %q", heading)
	}
	level := strings.Index(heading, " ")
	rest := text[i+len(heading)+2:]
	for j := 0; j < len(rest); j++ {
		if rest[j] == '#' && (j == 0 || rest[j-1] == '\n') && strings.Count(rest[j:j+level+1], "#") <= level && rest[j+strings.Count(rest[j:j+level+1], "#")] == ' ' {
			return rest[:j]
		}
	}
	return rest
}

// TestABI_ErrorCodes checks ABI.md's error code tables against Codes,
// row by row: the module's codes, then the codes hosts raise.
func TestABI_ErrorCodes(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (.*) \\|$")
	for _, tc := range []struct {
		heading string
		host    bool
	}{{"### Error codes", false}, {"### Codes hosts raise", true}} {
		var want, got []string
		for _, c := range Codes {
			if c.Host == tc.host {
				want = append(want, string(c.Code)+": "+c.When)
			}
		}
		for _, m := range row.FindAllStringSubmatch(abi(t, tc.heading), -1) {
			got = append(got, m[1]+": "+m[2])
		}
		if !slices.Equal(got, want) {
			t.Errorf("ABI.md %q lists\n%s\nwire.Codes has\n%s", tc.heading, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestABI_EventTypes checks the event types ABI.md lists against Events,
// and Events against the engine's.
func TestABI_EventTypes(t *testing.T) {
	var want []string
	for _, e := range Events {
		want = append(want, string(e.Type))
	}
	engineTypes := make([]string, 0, len(want))
	for _, typ := range api.EventTypes() {
		engineTypes = append(engineTypes, string(typ))
	}
	if !slices.Equal(engineTypes, want) {
		t.Errorf("api.EventTypes() is %v, wire.Events has %v", engineTypes, want)
	}
	cell := regexp.MustCompile("(?m)^\\| `type` \\| string \\| (.*) \\|$").FindStringSubmatch(abi(t, "### Event"))
	if cell == nil {
		t.Fatal("ABI.md's Event table has no row for type")
	}
	var got []string
	for _, m := range regexp.MustCompile("`([a-zA-Z]+)`").FindAllStringSubmatch(cell[1], -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("ABI.md lists event types\n%v\nwire.Events has\n%v", got, want)
	}
}

// TestABI_WaitReasons checks the wait reasons of ABI.md's Token record.
func TestABI_WaitReasons(t *testing.T) {
	m := regexp.MustCompile("`waiting` \\(([^)]*)\\)").FindStringSubmatch(abi(t, "### Token"))
	if m == nil {
		t.Fatal("ABI.md's Token section does not list the wait reasons as `waiting` (...)")
	}
	var got, want []string
	for _, r := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[1], -1) {
		got = append(got, r[1])
	}
	for _, w := range WaitReasons {
		want = append(want, string(w.Reason))
	}
	if !slices.Equal(got, want) {
		t.Errorf("ABI.md lists wait reasons %v, wire.WaitReasons has %v", got, want)
	}
}

// TestABI_Operations checks that ABI.md documents every operation, in
// order, each under a heading of its name, and each request field.
func TestABI_Operations(t *testing.T) {
	var got []string
	for _, m := range regexp.MustCompile("(?m)^### `([a-z_]+)`$").FindAllStringSubmatch(abi(t, "## Operations"), -1) {
		got = append(got, m[1])
	}
	if want := OperationNames(); !slices.Equal(got, want) {
		t.Errorf("ABI.md documents operations %v, wire.Operations has %v", got, want)
	}
}

// TestCodes_Distinct checks that every code and every SDK class is listed
// once, and that CodeOf finds each code from its sentinel.
func TestCodes_Distinct(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Codes {
		for _, k := range []string{string(c.Code), c.Class} {
			if seen[k] {
				t.Errorf("%s is listed twice", k)
			}
			seen[k] = true
		}
		if c.Err == nil || c.Host {
			continue
		}
		if got := CodeOf(c.Err); got != c.Code && !(c.Code == CodeUnknownOperation && got == CodeBadRequest) {
			t.Errorf("CodeOf(%v) = %s, want %s", c.Err, got, c.Code)
		}
		if Sentinel(c.Code) != c.Err {
			t.Errorf("Sentinel(%s) = %v, want %v", c.Code, Sentinel(c.Code), c.Err)
		}
	}
	if got := CodeOf(&api.DeployError{}); got != CodeDeployFailed {
		t.Errorf("CodeOf(*DeployError) = %s", got)
	}
}

// TestABI_RequestFields checks each operation's field table in ABI.md
// against its request type: the same fields, in the same order.
func TestABI_RequestFields(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `([a-zA-Z0-9]+)` \\|")
	for _, op := range Operations {
		section := abi(t, "### `"+op.Name+"`")
		section, _, _ = strings.Cut(section, "\n#### ") // a record the result holds
		var got []string
		for _, m := range row.FindAllStringSubmatch(section, -1) {
			got = append(got, m[1])
		}
		var want []string
		rt := reflect.TypeOf(op.Request)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			want = append(want, name)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("ABI.md documents %s's request fields %v, wire has %v", op.Name, got, want)
		}
	}
}
