package jsontext

import (
	"encoding/json"
	"testing"
)

// AppendString must write what encoding/json writes, byte for byte, since
// hosts compare records written both ways.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "\n\r\t\b\f\x00\x1f", "<a>&", "\u2028\u2029", "été 😀", "\xff\xfe", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}
