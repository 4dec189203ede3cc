package image

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A multi-platform build (make image-multiarch) runs the build stage once per target
// platform on the build machine's own: the stage must be pinned to $BUILDPLATFORM and
// hand buildx's TARGETOS and TARGETARCH to hack/build.sh, which cross-compiles; the final
// stage must not be pinned, so that each platform gets its own base image.
func TestDockerfileCrossCompilesForTheTargetPlatform(t *testing.T) {
	_, stages := parseDockerfile(t)
	build, final := stages[0], stages[len(stages)-1]
	if !slices.Contains(build.flags, "--platform=$BUILDPLATFORM") {
		t.Errorf("the build stage's FROM has flags %q, want --platform=$BUILDPLATFORM (native compilers, not emulated ones)", build.flags)
	}
	if slices.ContainsFunc(final.flags, func(f string) bool { return strings.HasPrefix(f, "--platform") }) {
		t.Errorf("the final stage's FROM is pinned (%q): every platform would get the same base image", final.flags)
	}
	var declared []string
	for _, node := range build.all("arg") {
		for _, arg := range words(node) {
			name, _, _ := strings.Cut(arg, "=")
			declared = append(declared, name)
		}
	}
	passed := regexp.MustCompile(`\bTARGETOS=\$TARGETOS\b.*\bTARGETARCH=\$TARGETARCH\b.*hack/build\.sh`)
	var runs []string
	for _, node := range build.all("run") {
		runs = append(runs, strings.Join(words(node), " "))
	}
	for _, arg := range []string{"TARGETOS", "TARGETARCH"} {
		if !slices.Contains(declared, arg) {
			t.Errorf("the build stage does not declare ARG %s, so buildx's value does not reach its RUN", arg)
		}
	}
	if !slices.ContainsFunc(runs, passed.MatchString) {
		t.Errorf("no RUN of the build stage passes TARGETOS and TARGETARCH to hack/build.sh: %q", runs)
	}
}

// make image-multiarch builds with buildx for amd64 and arm64 at once.
func TestMakeImageMultiarchBuildsAmd64AndArm64(t *testing.T) {
	recipe := strings.Join(makeRecipe(t, "image-multiarch"), "\n")
	if !strings.Contains(recipe, "docker buildx build --platform $(IMAGE_PLATFORMS)") {
		t.Fatalf("make image-multiarch runs %q, want docker buildx build --platform $(IMAGE_PLATFORMS)", recipe)
	}
	f, err := os.Open(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var platforms []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), "IMAGE_PLATFORMS ?= "); ok {
			platforms = strings.Split(strings.TrimSpace(value), ",")
		}
	}
	for _, want := range []string{"linux/amd64", "linux/arm64"} {
		if !slices.Contains(platforms, want) {
			t.Errorf("IMAGE_PLATFORMS is %q, want %s among them", platforms, want)
		}
	}
}

// Every package of the operator builds for linux/arm64 with cgo off, as the image's
// build stage builds it for that platform: go list resolves the arm64 build (build
// constraints, imports) and fails on a package that would need cgo or has no files for
// arm64. It compiles nothing, so it takes seconds; make build-arm64 (hack/build.sh with
// TARGETARCH=arm64) compiles the binary itself, minutes on a cold cache.
func TestOperatorResolvesForLinuxArm64WithoutCgo(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Error,DepsErrors,CgoFiles,Incomplete", "./cmd/stratos")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for linux/arm64: %v", err)
	}
	type pkg struct {
		ImportPath string
		Error      *struct{ Err string }
		DepsErrors []struct{ Err string }
		CgoFiles   []string
		Incomplete bool
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	count := 0
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		count++
		switch {
		case p.Error != nil:
			t.Errorf("%s does not build for linux/arm64: %s", p.ImportPath, p.Error.Err)
		case len(p.CgoFiles) > 0:
			t.Errorf("%s has cgo files for linux/arm64 (%v), but the image builds with CGO_ENABLED=0", p.ImportPath, p.CgoFiles)
		}
	}
	if count < 100 {
		t.Fatalf("go list listed %d packages for ./cmd/stratos; want its whole dependency graph", count)
	}
}

// make build-arm64 runs hack/build.sh for linux/arm64, as buildx's arm64 build stage does.
func TestMakeBuildArm64RunsTheBuildScriptForArm64(t *testing.T) {
	recipe := makeRecipe(t, "build-arm64")
	if !slices.ContainsFunc(recipe, func(line string) bool {
		return strings.Contains(line, "TARGETOS=linux") && strings.Contains(line, "TARGETARCH=arm64") && strings.Contains(line, "hack/build.sh")
	}) {
		t.Fatalf("make build-arm64 runs %q, want TARGETOS=linux TARGETARCH=arm64 hack/build.sh", recipe)
	}
}
