package capienv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/sim/process"
)

// Binary and ConfigDir are the names hack/tools.sh capi-manager links in the tools
// folder: the manager and its release's CRDs and webhook configurations.
const (
	Binary    = "capi-manager"
	ConfigDir = "capi-config"
)

// readyTimeout bounds how long a manager may take to serve its health check and webhooks.
const readyTimeout = 2 * time.Minute

// Options say how to run the manager.
type Options struct {
	// ToolsDir holds capi-manager (and capi-config, for Install).
	ToolsDir string
	// Kubeconfig is the path of an administrator's kubeconfig the manager connects with.
	Kubeconfig string
	// RestConfig reaches the same API server as an administrator; Start uses it to see
	// that the webhooks answer.
	RestConfig *rest.Config
	// Webhook is where the manager serves its webhooks: the one given to Install.
	Webhook *Webhook
	// Log receives the manager's output; nil discards it.
	Log io.Writer
}

// Manager is a running Cluster API core controller manager.
type Manager struct {
	proc *process.Process
}

// Start runs capi-manager against the API server, without leader election, with its
// health and diagnostics endpoints on free loopback ports, and returns once it is
// healthy and the API server reaches its webhooks. The CRDs and webhook configurations
// must be installed first (Install). The manager runs with its default feature gates:
// the Machine path (Machine, infrastructure and bootstrap references, the Node by
// provider ID) is not gated, and Stratos hands taints to the kubelet through the
// bootstrap configuration, so MachineTaintPropagation is not needed.
func Start(ctx context.Context, opts Options) (*Manager, error) {
	binary := filepath.Join(opts.ToolsDir, Binary)
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s is missing from %s: build it with hack/tools.sh %s", Binary, opts.ToolsDir, Binary)
	}
	if opts.Webhook == nil || opts.RestConfig == nil || opts.Kubeconfig == "" {
		return nil, errors.New("capienv.Start needs Options.Webhook, RestConfig and Kubeconfig")
	}
	healthPort, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	diagnosticsPort, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	proc, err := process.Start(Binary, binary, []string{
		"--kubeconfig=" + opts.Kubeconfig,
		"--leader-elect=false",
		"--webhook-port=" + strconv.Itoa(opts.Webhook.Port),
		"--webhook-cert-dir=" + opts.Webhook.CertDir,
		"--health-addr=127.0.0.1:" + strconv.Itoa(healthPort),
		// Plain http on loopback: nothing scrapes it, and the default https endpoint
		// would ask the API server to authorise every request.
		"--diagnostics-address=127.0.0.1:" + strconv.Itoa(diagnosticsPort),
		"--insecure-diagnostics",
	}, log)
	if err != nil {
		return nil, err
	}
	m := &Manager{proc: proc}
	if err := proc.WaitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), readyTimeout); err != nil {
		return nil, errors.Join(err, m.Stop())
	}
	if err := m.waitWebhooks(ctx, opts.RestConfig); err != nil {
		return nil, errors.Join(err, m.Stop())
	}
	return m, nil
}

// waitWebhooks waits until the API server reaches the manager's webhooks: a dry-run
// create of a v1beta2 Cluster passes its defaulting and validating webhooks, and one of
// a v1beta1 MachineDrainRule is converted to the stored v1beta2 and back. (A v1beta1
// Cluster would do for both, but converting its references back to v1beta1 asks for
// the CRDs of the kinds they name.)
func (m *Manager) waitWebhooks(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	// v1beta1 is deprecated, and the API server says so on every request.
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var lastErr error
	err = m.proc.Poll(ctx, readyTimeout, func(ctx context.Context) bool {
		lastErr = nil
		for _, probe := range webhookProbes() {
			if err := c.Create(ctx, probe, client.DryRunAll); err != nil {
				lastErr = err
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("CAPI's webhooks do not answer: %w (last: %v)", err, lastErr)
	}
	return nil
}

// webhookProbes are the objects waitWebhooks creates in a dry run.
func webhookProbes() []*unstructured.Unstructured {
	meta := map[string]any{"name": "capienv-webhook-probe", "namespace": "default"}
	return []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2",
			"kind":       "Cluster",
			"metadata":   meta,
			// The validating webhook wants a Cluster to name its infrastructure (or a
			// control plane, or a topology); the object need not exist.
			"spec": map[string]any{"infrastructureRef": map[string]any{
				"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "ProbeCluster", "name": "probe",
			}},
		}},
		{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta1",
			"kind":       "MachineDrainRule",
			"metadata":   meta,
			"spec":       map[string]any{"drain": map[string]any{"behavior": "Skip"}},
		}},
	}
}

// Stop stops the manager: SIGTERM, then a kill after ten seconds.
func (m *Manager) Stop() error { return m.proc.Stop() }
