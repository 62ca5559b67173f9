package wire

import (
	"encoding/json"
	"os"
	"testing"
)

// TestJobToken: job types become subject tokens and back, as the vectors
// the SDK and the Node worker example test against say.
func TestJobToken(t *testing.T) {
	raw, err := os.ReadFile("testdata/job-tokens.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors map[string]string
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	for typ, want := range vectors {
		if got := JobToken(typ); got != want {
			t.Errorf("JobToken(%q) = %q, want %q", typ, got, want)
		}
		if back, ok := JobType(want); !ok || back != typ {
			t.Errorf("JobType(%q) = %q, %v, want %q", want, back, ok, typ)
		}
	}
	for _, bad := range []string{"", "a%2", "a%zz", "a%61", "a.b", "a%2e"} {
		if typ, ok := JobType(bad); ok {
			t.Errorf("JobType(%q) = %q, want none", bad, typ)
		}
	}
}

// TestJobSubjects: the names a worker in another language uses.
func TestJobSubjects(t *testing.T) {
	if got := JobSubject("c1", "io.x:1"); got != "flowtrack.c1.jobs.io%2Ex%3A1" {
		t.Errorf("JobSubject = %q", got)
	}
	if got := JobStream("c1"); got != "FLOWTRACK_JOBS_c1" {
		t.Errorf("JobStream = %q", got)
	}
	if got := JobMsgID(12, 35); got != "12-35" {
		t.Errorf("JobMsgID = %q", got)
	}
}
