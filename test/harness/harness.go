// Package harness starts a real etcd and kube-apiserver for integration tests, with the
// Stratos CRDs installed. The binaries are built from the Go module proxy by
// hack/tools.sh at pinned versions and cached; a missing binary is built, never a reason
// to skip.
package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stratos-sh/stratos/internal/scheme"
	"github.com/stratos-sh/stratos/internal/sim/tools"
)

// Tools are the binaries the harness runs.
var Tools = []string{"etcd", "kube-apiserver"}

// Env is a running API server.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a controller-runtime client with the Kubernetes and Stratos types.
	Client client.Client
	// Scheme holds the Kubernetes and Stratos types.
	Scheme *runtime.Scheme
	// StartupTime is how long etcd and the API server took to start and install the CRDs.
	StartupTime time.Duration

	env *envtest.Environment
}

// Options say how to start the API server beyond the defaults.
type Options struct {
	// WithoutCRDs leaves the Stratos CRDs out, for tests that install them the way a
	// user does.
	WithoutCRDs bool
	// AdmissionPlugins are enabled beside kube-apiserver's default ones, for tests of
	// what clusters that enable more of them refuse (OwnerReferencesPermissionEnforcement,
	// say). The API server authorises by RBAC, so a client impersonating a user is held
	// to that user's roles.
	AdmissionPlugins []string
}

// Start builds the binaries if they are missing, starts etcd and kube-apiserver on
// loopback and installs the CRDs from config/crd/bases.
func Start() (*Env, error) { return StartWith(Options{}) }

// StartWithoutCRDs starts etcd and kube-apiserver with no Stratos CRDs, for tests that
// install them the way a user does.
func StartWithoutCRDs() (*Env, error) { return StartWith(Options{WithoutCRDs: true}) }

// StartWith starts etcd and kube-apiserver as opts say.
func StartWith(opts Options) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := EnsureTools(Tools...)
	if err != nil {
		return nil, err
	}
	collectGarbageLessOften()
	started := time.Now()
	var env *envtest.Environment
	var cfg *rest.Config
	// envtest waits a fixed 5 s for the default namespace after the API server is ready,
	// which a loaded 2-core machine can exceed ("default namespace didn't register within
	// deadline", seen at load 50): a start that fails is stopped and tried again.
	for attempt := 1; ; attempt++ {
		env = newEnvironment(assets, root, opts)
		if cfg, err = env.Start(); err == nil {
			break
		}
		_ = env.Stop()
		if attempt == startAttempts {
			return nil, fmt.Errorf("starting etcd and kube-apiserver from %s (%d attempts): %w", assets, attempt, err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: scheme.Scheme, StartupTime: time.Since(started), env: env}, nil
}

// controlPlaneGOGC is the GOGC the processes the tests start run with: etcd and
// kube-apiserver spend about a sixth of their CPU collecting garbage at Go's default of
// 100, and the API servers are half of make test's CPU. At 400 they trade memory, of
// which a test's control plane uses little, for CPU: test/integration/warmpool spent
// 11% less CPU in all.
const controlPlaneGOGC = "400"

// collectGarbageLessOften sets GOGC in the test binary's environment, unless it is set
// already, for the processes it starts from now on: envtest starts etcd and
// kube-apiserver with the parent's environment and has no setting of its own for it.
// The test binary's own collector read GOGC when it started, so it is unchanged.
var collectGarbageLessOften = sync.OnceFunc(func() {
	if _, set := os.LookupEnv("GOGC"); !set {
		_ = os.Setenv("GOGC", controlPlaneGOGC)
	}
})

// startAttempts is how many times StartWith starts the control plane before it gives up.
const startAttempts = 3

// newEnvironment is an envtest environment of the pinned binaries in assets, as opts say.
func newEnvironment(assets, root string, opts Options) *envtest.Environment {
	// envtest gives each process 20 s to become ready, which a loaded 2-core machine can
	// exceed (seen: "timeout waiting for process kube-apiserver to start" at load 50):
	// a slow start should only wait longer, never fail a test.
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: 2 * time.Minute}
	// Name the binaries outright so that a KUBEBUILDER_ASSETS left in the environment
	// cannot swap in other versions.
	env.ControlPlane.GetAPIServer().Path = filepath.Join(assets, "kube-apiserver")
	env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	// API Priority and Fairness queues requests by who sends them, which no test here
	// is about; without it a test's API server spends about 6% less CPU (measured on
	// test/integration/warmpool).
	env.ControlPlane.GetAPIServer().Configure().Set("enable-priority-and-fairness", "false")
	if len(opts.AdmissionPlugins) > 0 {
		env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", strings.Join(opts.AdmissionPlugins, ","))
	}
	if !opts.WithoutCRDs {
		env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd", "bases")}
		env.ErrorIfCRDPathMissing = true
	}
	return env
}

// StartT starts an Env for one test and stops it when the test ends.
func StartT(t testing.TB) *Env {
	t.Helper()
	return stopAtCleanup(t, Start)
}

// StartWithoutCRDsT is StartWithoutCRDs for one test.
func StartWithoutCRDsT(t testing.TB) *Env {
	t.Helper()
	return stopAtCleanup(t, StartWithoutCRDs)
}

// StartWithT is StartWith for one test.
func StartWithT(t testing.TB, opts Options) *Env {
	t.Helper()
	return stopAtCleanup(t, func() (*Env, error) { return StartWith(opts) })
}

func stopAtCleanup(t testing.TB, start func() (*Env, error)) *Env {
	t.Helper()
	env, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("API server harness started in %s", env.StartupTime.Round(time.Millisecond))
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the harness: %v", err)
		}
	})
	return env
}

// Stop stops the API server and etcd.
func (e *Env) Stop() error { return e.env.Stop() }

// Kubeconfig writes a kubeconfig for an administrator of the API server to path.
func (e *Env) Kubeconfig(path string) error {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: "stratos-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// EnsureTools builds the named tools with hack/tools.sh when they are not cached yet and
// returns the folder that holds them (tools.EnsureTools, kept here for the tests).
func EnsureTools(names ...string) (string, error) { return tools.EnsureTools(names...) }

// RepoRoot is the folder that holds the module's go.mod (tools.RepoRoot).
func RepoRoot() (string, error) { return tools.RepoRoot() }
