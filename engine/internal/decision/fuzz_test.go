package decision

import (
	"os"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/dmnxml"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// FuzzDMN: any document imports, compiles and evaluates every decision
// over a few inputs without panicking or hanging; what fails says why.
func FuzzDMN(f *testing.F) {
	for _, file := range []string{"../../testdata/discount.dmn", "../../testdata/table100.dmn"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(dmnDoc(table("PRIORITY", "", `<output name="o"><outputValues><text>"a","b"</text></outputValues></output>`, rule("r", "[1..2]", `"a"`)))))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := dmnxml.Import("fuzz.dmn", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error that says nothing")
			}
			return
		}
		s, err := Compile([]*model.DMNDefinitions{d}, Options{Lenient: true})
		if err != nil {
			return
		}
		for _, dec := range d.Decisions {
			_, _ = s.Evaluate(dec.ID, map[string]any{"x": 1.0, "customer": "gold", "order amount": 10.0})
		}
	})
}
