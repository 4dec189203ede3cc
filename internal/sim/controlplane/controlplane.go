// Package controlplane runs a Kubernetes control plane on loopback for the simulator:
// etcd and kube-apiserver (through envtest), kube-scheduler and kube-controller-manager
// as child processes, every binary built by hack/tools.sh at pinned versions. The API
// server keeps an audit log of the writes Stratos makes, so that a report can count
// them even across operator crashes.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Tools are the binaries a control plane runs, looked up in Options.ToolsDir.
var Tools = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"}

// OperatorUser is the user the operator's kubeconfig authenticates as; the audit log
// keeps the writes of this user only.
const OperatorUser = "stratos"

// Options configure a control plane.
type Options struct {
	// ToolsDir holds the binaries named in Tools.
	ToolsDir string
	// WorkDir receives the kubeconfigs, the audit log and the components' logs.
	WorkDir string
	// CRDDir holds the CRDs to install before Start returns.
	CRDDir string
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// AdminKubeconfig is for kubectl; OperatorKubeconfig for the operator.
	AdminKubeconfig, OperatorKubeconfig string
	// AuditLog is the API server's audit log of the operator's writes.
	AuditLog string

	env        *envtest.Environment
	components []*component
}

// Start starts etcd and kube-apiserver, installs the CRDs, then starts kube-scheduler
// and kube-controller-manager and waits until both serve their health checks.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	for _, name := range Tools {
		if _, err := os.Stat(filepath.Join(opts.ToolsDir, name)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: build it with hack/tools.sh %s (make demo does)", name, opts.ToolsDir, name)
		}
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, err
	}
	cp := &ControlPlane{AuditLog: filepath.Join(opts.WorkDir, "audit.log")}
	// The API server appends to its audit log, and a report counts this run's writes
	// only, so a log left by an earlier run in the same directory goes first.
	if err := os.Remove(cp.AuditLog); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	policy := filepath.Join(opts.WorkDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	// envtest waits a fixed 5 s for the default namespace once the API server is ready,
	// which a loaded machine can exceed: a failed start is stopped and tried again.
	var env *envtest.Environment
	var cfg *rest.Config
	var err error
	for attempt := 1; ; attempt++ {
		env = newEnvironment(opts, policy, cp.AuditLog)
		if cfg, err = env.Start(); err == nil {
			break
		}
		_ = env.Stop()
		if attempt == 3 {
			return nil, fmt.Errorf("starting etcd and kube-apiserver from %s (%d attempts): %w", opts.ToolsDir, attempt, err)
		}
		// The next attempt's writes are the run's only ones.
		if err := os.Remove(cp.AuditLog); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	cp.env, cp.Config = env, cfg

	kubeconfigs := map[string]string{}
	for _, user := range []string{"admin", OperatorUser, "kube-scheduler", "kube-controller-manager"} {
		path := filepath.Join(opts.WorkDir, user+".kubeconfig")
		if err := cp.writeKubeconfig(user, path); err != nil {
			return nil, errors.Join(err, cp.Stop())
		}
		kubeconfigs[user] = path
	}
	cp.AdminKubeconfig, cp.OperatorKubeconfig = kubeconfigs["admin"], kubeconfigs[OperatorUser]

	scheduler, err := startScheduler(opts, kubeconfigs["kube-scheduler"])
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	cp.components = append(cp.components, scheduler)
	controllerManager, err := startControllerManager(opts, kubeconfigs["kube-controller-manager"])
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	cp.components = append(cp.components, controllerManager)
	for _, c := range cp.components {
		if err := c.waitHealthy(ctx); err != nil {
			return nil, errors.Join(err, cp.Stop())
		}
	}
	return cp, nil
}

// writeKubeconfig writes a kubeconfig for a cluster administrator named user.
// newEnvironment is the envtest environment of the simulated cluster's etcd and
// kube-apiserver, auditing to auditLog by policy.
func newEnvironment(opts Options, policy, auditLog string) *envtest.Environment {
	env := &envtest.Environment{
		BinaryAssetsDirectory: opts.ToolsDir,
		CRDDirectoryPaths:     []string{opts.CRDDir},
		ErrorIfCRDPathMissing: true,
		// Not envtest's 20 s: on a loaded machine (scenarios side by side in test/e2e)
		// a start only takes longer.
		ControlPlaneStartTimeout: 2 * time.Minute,
	}
	env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(opts.ToolsDir, "etcd")}
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.Path = filepath.Join(opts.ToolsDir, "kube-apiserver")
	apiServer.Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", auditLog).
		Set("audit-log-format", "json").
		Set("audit-log-mode", "blocking").
		// A burst of a thousand pods must not queue behind the default request limits.
		Set("max-requests-inflight", "1000").
		Set("max-mutating-requests-inflight", "500")
	return env
}

func (cp *ControlPlane) writeKubeconfig(user, path string) error {
	u, err := cp.env.ControlPlane.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding user %s: %w", user, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Stop stops the components, then the API server and etcd.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for i := len(cp.components) - 1; i >= 0; i-- {
		errs = append(errs, cp.components[i].stop())
	}
	cp.components = nil
	if cp.env != nil {
		errs = append(errs, cp.env.Stop())
		cp.env = nil
	}
	return errors.Join(errs...)
}

// auditPolicy records, at Metadata level, the writes the operator's user makes, and
// nothing else, so that the log stays small during a burst of a thousand pods.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + OperatorUser + `"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`
