package image

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildScriptMakesAStaticStrippedStampedBinary runs hack/build.sh as the image's build
// stage does (version and revision passed in) and inspects what it wrote.
func TestBuildScriptMakesAStaticStrippedStampedBinary(t *testing.T) {
	root := repoRoot(t)
	dist := t.TempDir()
	const version, revision = "v9.8.7-imagetest", "0123456789abcdef0123456789abcdef01234567"
	cmd := exec.Command(filepath.Join(root, "hack", "build.sh"), "stratos")
	cmd.Env = append(os.Environ(), "DIST="+dist, "VERSION="+version, "REVISION="+revision)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/build.sh stratos: %v\n%s", err, out)
	}
	binary := filepath.Join(dist, "stratos")

	out, err := exec.Command(binary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("stratos --version: %v\n%s", err, out)
	}
	if want := "stratos " + version + " (revision " + revision + ","; !strings.HasPrefix(string(out), want) {
		t.Errorf("stratos --version printed %q, want it to start with %q", out, want)
	}

	file, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	// A dynamically linked binary names its loader in a PT_INTERP header; distroless/static
	// and scratch have no loader and no libc.
	for _, prog := range file.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Error("the binary is dynamically linked (it has a PT_INTERP header): cgo was not off")
		}
	}
	if file.Section(".symtab") != nil {
		t.Error("the binary has a symbol table: it was not linked with -s")
	}

	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root)) {
		t.Errorf("the binary contains the checkout's path %s: it was not built with -trimpath", root)
	}
}
