// Package image checks the container image's recipe, which no test here can build (a
// container engine is not everywhere make test runs): the Dockerfile is parsed with
// BuildKit's own parser and held to what the image must be, and the build script its
// build stage runs is run and its binary inspected (build_test.go).
package image

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"golang.org/x/mod/modfile"

	"github.com/stratos-sh/stratos/test/harness"
)

// stage is one FROM and the instructions under it.
type stage struct {
	base, name   string
	flags        []string // of its FROM, such as --platform=$BUILDPLATFORM
	instructions []*parser.Node
}

func (s stage) all(instruction string) []*parser.Node {
	var found []*parser.Node
	for _, node := range s.instructions {
		if strings.EqualFold(node.Value, instruction) {
			found = append(found, node)
		}
	}
	return found
}

// words are an instruction's arguments as the parser split them.
func words(node *parser.Node) []string {
	var out []string
	for next := node.Next; next != nil; next = next.Next {
		out = append(out, next.Value)
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// parseDockerfile returns the global ARG defaults and the stages of the repository's Dockerfile.
func parseDockerfile(t *testing.T) (map[string]string, []stage) {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	result, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("the Dockerfile does not parse: %v", err)
	}
	for _, warning := range result.Warnings {
		t.Errorf("Dockerfile: %s", warning.Short)
	}
	globalArgs := map[string]string{}
	var stages []stage
	for _, node := range result.AST.Children {
		if strings.EqualFold(node.Value, "from") {
			args := words(node)
			s := stage{base: args[0], flags: node.Flags}
			if len(args) == 3 && strings.EqualFold(args[1], "as") {
				s.name = args[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if strings.EqualFold(node.Value, "arg") {
				for _, arg := range words(node) {
					name, value, _ := strings.Cut(arg, "=")
					globalArgs[name] = value
				}
			}
			continue
		}
		stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, node)
	}
	return globalArgs, stages
}

func TestDockerfileIsMultiStage(t *testing.T) {
	_, stages := parseDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("the Dockerfile has %d stage(s), want a build stage and a final stage", len(stages))
	}
	final := stages[len(stages)-1]
	copies := final.all("copy")
	if len(copies) != 1 {
		t.Fatalf("the final stage has %d COPY instructions, want one: the binary", len(copies))
	}
	from := ""
	for _, flag := range copies[0].Flags {
		if value, ok := strings.CutPrefix(flag, "--from="); ok {
			from = value
		}
	}
	if from == "" || from != stages[0].name {
		t.Errorf("the final stage copies %v with --from=%q, want it from the build stage %q", words(copies[0]), from, stages[0].name)
	}
	if runs := final.all("run"); len(runs) > 0 {
		t.Errorf("the final stage runs %d commands; it should only hold the binary", len(runs))
	}
}

func TestDockerfileBuildStageUsesTheGoReleaseOfGoMod(t *testing.T) {
	args, stages := parseDockerfile(t)
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	// go 1.26.0 → the golang:1.26 image (the newest 1.26 patch release).
	parts := strings.Split(mod.Go.Version, ".")
	want := "golang:" + parts[0] + "." + parts[1]
	base := os.Expand(stages[0].base, func(name string) string { return args[name] })
	if base != want {
		t.Errorf("the build stage is FROM %s (%s), want %s for go.mod's go %s", stages[0].base, base, want, mod.Go.Version)
	}
	env := map[string]string{}
	for _, node := range stages[0].all("env") {
		w := words(node)
		for i := 0; i+1 < len(w); i += 3 {
			env[w[i]] = w[i+1]
		}
	}
	if env["GOTOOLCHAIN"] != "local" {
		t.Errorf("the build stage sets GOTOOLCHAIN=%q, want local: the image's Go builds, not a downloaded toolchain", env["GOTOOLCHAIN"])
	}
}

func TestDockerfileDownloadsModulesInALayerBeforeTheSource(t *testing.T) {
	_, stages := parseDockerfile(t)
	download, source := -1, -1
	for i, node := range stages[0].instructions {
		switch {
		case strings.EqualFold(node.Value, "run") && strings.Contains(strings.Join(words(node), " "), "go mod download"):
			download = i
		case strings.EqualFold(node.Value, "copy") && slices.Equal(words(node), []string{".", "."}):
			source = i
		}
	}
	if download < 0 || source < 0 || download > source {
		t.Errorf("want RUN go mod download (instruction %d) before COPY . . (instruction %d), so that a source change keeps the modules' layer", download, source)
	}
}

// makeRecipe returns the recipe lines of a target in the Makefile, read independently of make.
func makeRecipe(t *testing.T, target string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recipe []string
	in := false
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			recipe = append(recipe, strings.TrimSpace(line))
		case in:
			return recipe
		}
	}
	return recipe
}

func TestDockerfileBuildStageRunsTheScriptMakeBuildRuns(t *testing.T) {
	_, stages := parseDockerfile(t)
	const script = "hack/build.sh"
	if recipe := makeRecipe(t, "build"); !slices.ContainsFunc(recipe, func(line string) bool { return strings.HasPrefix(line, script) }) {
		t.Fatalf("make build runs %q, want %s", recipe, script)
	}
	var runs []string
	for _, node := range stages[0].all("run") {
		runs = append(runs, strings.Join(words(node), " "))
	}
	built := regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(script) + `\s+stratos\b`)
	if !slices.ContainsFunc(runs, built.MatchString) {
		t.Errorf("the build stage runs %q, want %s stratos, the build make build and CI run", runs, script)
	}
}

func TestDockerfileFinalStageIsDistrolessOrScratch(t *testing.T) {
	_, stages := parseDockerfile(t)
	base := stages[len(stages)-1].base
	if base != "scratch" && !strings.HasPrefix(base, "gcr.io/distroless/static") {
		t.Errorf("the final stage is FROM %s, want scratch or gcr.io/distroless/static*: nothing but the static binary", base)
	}
}

func TestDockerfileRunsAsANumericNonRootUser(t *testing.T) {
	_, stages := parseDockerfile(t)
	users := stages[len(stages)-1].all("user")
	if len(users) == 0 {
		t.Fatal("the final stage sets no USER: the image would run as root")
	}
	// The last USER is the one the container runs as; a number lets the kubelet check
	// runAsNonRoot without a passwd file.
	user := words(users[len(users)-1])[0]
	numeric := regexp.MustCompile(`^([0-9]+)(:([0-9]+))?$`).FindStringSubmatch(user)
	if numeric == nil {
		t.Fatalf("USER %s: want a numeric UID[:GID]", user)
	}
	if numeric[1] == "0" || numeric[3] == "0" {
		t.Errorf("USER %s: want a non-root UID and GID", user)
	}
}

func TestDockerfileEntrypointIsTheBinaryInExecForm(t *testing.T) {
	_, stages := parseDockerfile(t)
	entrypoints := stages[len(stages)-1].all("entrypoint")
	if len(entrypoints) != 1 {
		t.Fatalf("the final stage has %d ENTRYPOINTs, want one", len(entrypoints))
	}
	if !entrypoints[0].Attributes["json"] {
		t.Errorf("ENTRYPOINT %s is in shell form; the image has no shell", entrypoints[0].Original)
	}
	if got := words(entrypoints[0]); !slices.Equal(got, []string{"/stratos"}) {
		t.Errorf("ENTRYPOINT %q, want [/stratos]", got)
	}
}

func TestDockerfileLabelsTheImage(t *testing.T) {
	_, stages := parseDockerfile(t)
	final := stages[len(stages)-1]
	labels := map[string]string{}
	for _, node := range final.all("label") {
		w := words(node)
		for i := 0; i+1 < len(w); i += 3 {
			labels[w[i]] = strings.Trim(w[i+1], `"`)
		}
	}
	for _, key := range []string{"title", "description", "source", "licenses"} {
		if labels["org.opencontainers.image."+key] == "" {
			t.Errorf("label org.opencontainers.image.%s is missing", key)
		}
	}
	// The version and revision are the build's: they come from build arguments.
	finalArgs := map[string]bool{}
	for _, node := range final.all("arg") {
		for _, arg := range words(node) {
			name, _, _ := strings.Cut(arg, "=")
			finalArgs[name] = true
		}
	}
	for key, arg := range map[string]string{"version": "VERSION", "revision": "REVISION"} {
		label := labels["org.opencontainers.image."+key]
		if label != "${"+arg+"}" && label != "$"+arg {
			t.Errorf("label org.opencontainers.image.%s = %q, want ${%s}", key, label, arg)
		}
		if !finalArgs[arg] {
			t.Errorf("the final stage does not declare ARG %s, so the %s label would be empty", arg, key)
		}
	}
}

func TestDockerignoreKeepsBuildOutputAndLocalStateOut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			patterns[strings.TrimSuffix(line, "/")] = true
		}
	}
	for _, path := range []string{"bin", "dist", ".work", ".git"} {
		if !patterns[path] {
			t.Errorf(".dockerignore does not exclude %s", path)
		}
	}
}
