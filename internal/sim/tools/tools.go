// Package tools builds the binaries the simulator and the tests run (etcd,
// kube-apiserver, moto_server, capi-manager…) with hack/tools.sh, at pinned versions,
// into the repository's tool cache; stratos-sim links it, so it lives in the simulator's
// wing rather than under test/.
package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"golang.org/x/mod/modfile"
)

var (
	ensureMu sync.Mutex
	ensured  = map[string]bool{}
)

// EnsureTools builds the named tools with hack/tools.sh when they are not cached yet and
// returns the folder that holds them.
func EnsureTools(names ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin")
	ensureMu.Lock()
	defer ensureMu.Unlock()
	var missing []string
	for _, name := range names {
		if !ensured[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return bin, nil
	}
	cmd := exec.Command(filepath.Join(root, "hack", "tools.sh"), missing...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %v with hack/tools.sh: %w", missing, err)
	}
	for _, name := range missing {
		ensured[name] = true
	}
	return bin, nil
}

// RepoRoot is the folder that holds the module's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(data) == modulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no Stratos go.mod above the working directory")
		}
		dir = parent
	}
}

const modulePath = "github.com/stratos-sh/stratos"
