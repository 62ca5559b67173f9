package conformance

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// catalogueDecisions counts the decisions of the constraint catalogue's
// decision table (docs/validation.md), per rule family (EXT, REF, XSD)
// and decision (error, warning, n/a).
func catalogueDecisions(path string) (map[string]map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	row := regexp.MustCompile(`(?m)^\| (EXT|REF|XSD)\.[\w-]+ \| (error|warning|n/a) \|`)
	counts := map[string]map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		if counts[m[1]] == nil {
			counts[m[1]] = map[string]int{}
		}
		counts[m[1]][m[2]]++
	}
	return counts, nil
}

// TestCatalogueDecisions reports how many rules of the constraint
// catalogue flowtrack enforces as errors, reports as warnings, and holds
// not applicable (engine/catalogue_test.go holds the table to the code).
func TestCatalogueDecisions(t *testing.T) {
	counts, err := catalogueDecisions("../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	if counts["EXT"]["error"]+counts["EXT"]["warning"]+counts["EXT"]["n/a"] != 152 {
		t.Fatalf("docs/validation.md decides %v EXT rules, not 152", counts["EXT"])
	}
	var parts []string
	for _, fam := range []string{"EXT", "REF", "XSD"} {
		c := counts[fam]
		parts = append(parts, fmt.Sprintf("%s %d: %d enforced, %d warned, %d n/a", fam, c["error"]+c["warning"]+c["n/a"], c["error"], c["warning"], c["n/a"]))
	}
	reportf("catalogue rules (docs/validation.md): %s", strings.Join(parts, "; "))
}
