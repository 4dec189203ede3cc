// Package layout checks the repository's package layout with go list: what the binaries
// and the packages under internal/ may import.
package layout

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/tools"
)

const (
	module = "github.com/stratos-sh/stratos"
	// testRoot is test/: integration and end-to-end suites and their fixtures.
	testRoot = module + "/test"
)

func underTest(path string) bool {
	return path == testRoot || strings.HasPrefix(path, testRoot+"/")
}

// goList runs go list at the module's root with the given arguments and returns its
// output's lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestInternalDoesNotImportTest fails, naming the package and what it imports, when a
// package under internal/ or cmd/ imports a package under test/. Only the packages'
// own files count, not their _test.go files: test/ holds the fixtures tests share (the
// real API server of test/harness, test/logcapture), which tests anywhere may use,
// while what the packages themselves import is linked into stratos and stratos-sim.
func TestInternalDoesNotImportTest(t *testing.T) {
	lines := goList(t, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./internal/...", "./cmd/...")
	if len(lines) < 10 {
		t.Fatalf("go list listed %d packages under internal/ and cmd/, want many:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			if underTest(imp) {
				t.Errorf("%s imports %s: packages under internal/ and cmd/ must not import test/ (move what both need under internal/, such as internal/sim)", pkg, imp)
			}
		}
	}
}

// TestBinariesLinkNothingFromTest fails, naming the package, when stratos or stratos-sim
// depends on a package under test/ through any chain of imports.
func TestBinariesLinkNothingFromTest(t *testing.T) {
	for _, bin := range []string{"./cmd/stratos", "./cmd/stratos-sim"} {
		deps := goList(t, "-deps", "-f", "{{.ImportPath}}", bin)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed %d packages, want many", bin, len(deps))
		}
		for _, dep := range deps {
			if underTest(dep) {
				t.Errorf("%s links %s from test/ (go list -deps %s)", bin, dep, bin)
			}
		}
	}
}
