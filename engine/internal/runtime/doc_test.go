package runtime

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The package comment (doc.go) maps every element kind to the functions
// that implement it and the tests that hold it. These tests make sure
// that map does not rot: every name it brackets is declared, every file it
// names exists, every test it names is defined and every scenario group it
// names has scenarios.

// moduleRoot is the repository root, seen from this package's directory.
const moduleRoot = "../../.."

// docPackages are the packages the map may name besides this one, by the
// prefix it uses, with their directory under the module root.
var docPackages = map[string]string{
	"eventhub": "engine/internal/eventhub",
	"clock":    "engine/clock",
	"expr":     "engine/internal/expr",
	"engine":   "engine",
}

// declared returns the names the package in dir declares: functions,
// types, variables and constants by name, methods and struct fields as
// Type.name. Test files are left out: the map names the package's code.
func declared(dir string) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", e.Name(), err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					names[d.Name.Name] = true
					continue
				}
				names[receiverName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
						// A variable of an anonymous struct type, such as
						// a cache with its lock embedded, has its fields
						// named after it.
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, n := range s.Names {
								for _, fld := range st.Fields.List {
									for _, fn := range fld.Names {
										names[n.Name+"."+fn.Name] = true
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return names, nil
}

// receiverName returns the type name of a method's receiver.
func receiverName(x ast.Expr) string {
	switch t := x.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.IndexListExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// docRefs is what a doc comment names.
type docRefs struct {
	names []string // bracketed identifiers: [Name], [Type.Method], [pkg.Name]
	files []string // Go files and scenario groups, as paths or glob patterns
	tests []string // test, fuzz and benchmark functions
}

var (
	nameRef     = regexp.MustCompile(`\[([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\]`)
	fileRef     = regexp.MustCompile(`[A-Za-z0-9_*./-]*[A-Za-z0-9_*]\.go\b|conformance/scenarios/[A-Za-z0-9_*]+`)
	testRef     = regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*`)
	testFuncDef = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)
)

// refsOf collects what text names.
func refsOf(text string) docRefs {
	var r docRefs
	for _, m := range nameRef.FindAllStringSubmatch(text, -1) {
		r.names = append(r.names, m[1])
	}
	r.files = fileRef.FindAllString(text, -1)
	r.tests = testRef.FindAllString(text, -1)
	return r
}

// problems returns what in r does not exist: names resolved in this
// package (decls) or, with a package prefix, in that package
// (pkgDecls), files and scenario groups under root (a path without a
// directory is one of this package's files) and tests defined in
// testFuncs.
func (r docRefs) problems(decls map[string]bool, pkgDecls map[string]map[string]bool, root string, testFuncs map[string]bool) []string {
	var out []string
	for _, n := range r.names {
		first, rest, qualified := strings.Cut(n, ".")
		if pd, ok := pkgDecls[first]; ok && qualified {
			if !pd[rest] {
				out = append(out, fmt.Sprintf("[%s]: package %s declares no %s", n, first, rest))
			}
			continue
		}
		if !decls[n] {
			out = append(out, fmt.Sprintf("[%s]: package runtime declares no %s", n, n))
		}
	}
	for _, f := range r.files {
		pattern := filepath.Join(root, filepath.FromSlash(f))
		if !strings.Contains(f, "/") {
			pattern = f // this package's own file
		}
		matches, err := filepath.Glob(pattern)
		if err != nil || len(matches) == 0 {
			out = append(out, fmt.Sprintf("%s: no such file", f))
		}
	}
	for _, t := range r.tests {
		if !testFuncs[t] {
			out = append(out, fmt.Sprintf("%s: no such test", t))
		}
	}
	return out
}

// testFuncsUnder returns the test, fuzz and benchmark functions defined
// in the test files under dirs (relative to root).
func testFuncsUnder(root string, dirs ...string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range testFuncDef.FindAllStringSubmatch(string(src), -1) {
				out[m[1]] = true
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing tests under %s: %w", dir, err)
		}
	}
	return out, nil
}

// packageDoc returns the package comment of doc.go.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, f.Doc, "doc.go holds the package comment")
	return f.Doc.Text()
}

// checkInputs parses what the map is checked against.
func checkInputs(t *testing.T) (map[string]bool, map[string]map[string]bool, map[string]bool) {
	t.Helper()
	_, err := os.Stat(filepath.Join(moduleRoot, "go.mod"))
	require.NoError(t, err, "the module root is %s", moduleRoot)
	decls, err := declared(".")
	require.NoError(t, err)
	pkgDecls := map[string]map[string]bool{}
	for prefix, dir := range docPackages {
		pkgDecls[prefix], err = declared(filepath.Join(moduleRoot, dir))
		require.NoError(t, err)
	}
	tests, err := testFuncsUnder(moduleRoot, "engine", "conformance")
	require.NoError(t, err)
	return decls, pkgDecls, tests
}

// TestDoc_NamesExist: every function, type, file, test and scenario group
// the package comment names exists.
func TestDoc_NamesExist(t *testing.T) {
	decls, pkgDecls, tests := checkInputs(t)
	r := refsOf(packageDoc(t))
	// The map names well over a hundred functions: a pattern that stopped
	// matching would make the check below pass on nothing.
	require.Greater(t, len(r.names), 150, "bracketed names found in doc.go")
	require.Greater(t, len(r.files), 60, "files and scenario groups found in doc.go")
	require.Greater(t, len(r.tests), 25, "tests found in doc.go")
	problems := r.problems(decls, pkgDecls, moduleRoot, tests)
	t.Logf("doc.go names %d identifiers, %d files and scenario groups, %d tests", len(r.names), len(r.files), len(r.tests))
	sort.Strings(problems)
	require.Empty(t, problems, "doc.go names what does not exist: update the map")
}

// TestDoc_ProblemsAreFound: a map naming what does not exist fails the
// check, name by name.
func TestDoc_ProblemsAreFound(t *testing.T) {
	decls, pkgDecls, tests := checkInputs(t)
	r := refsOf(`A made-up map: [Instance.handle] and [Instance.noSuchStep],
[noSuchFunc], [eventhub.Hub.Schedule] and [eventhub.Hub.noSuchLock],
[Engine.mu] and [Engine.noSuchMu]; files track.go, nosuch.go,
engine/scopes_test.go, engine/nosuch_test.go, conformance/scenarios/link_*
and conformance/scenarios/nosuch_*; tests TestStandardLoop and
TestNoSuchThing.`)
	got := r.problems(decls, pkgDecls, moduleRoot, tests)
	require.ElementsMatch(t, []string{
		"[Instance.noSuchStep]: package runtime declares no Instance.noSuchStep",
		"[noSuchFunc]: package runtime declares no noSuchFunc",
		"[eventhub.Hub.noSuchLock]: package eventhub declares no Hub.noSuchLock",
		"[Engine.noSuchMu]: package runtime declares no Engine.noSuchMu",
		"nosuch.go: no such file",
		"engine/nosuch_test.go: no such file",
		"conformance/scenarios/nosuch_*: no such file",
		"TestNoSuchThing: no such test",
	}, got)
}
