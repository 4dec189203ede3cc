package simtest

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// NewManager returns a manager for one test, logging to log: no metrics or probe
// servers, and controller names that may repeat, as each test makes its own.
func NewManager(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, log logr.Logger) manager.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Logger:                 log,
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// RunManager starts mgr, once its controllers are set up, until the test ends; the
// test fails if the manager ends with an error.
func RunManager(t *testing.T, mgr manager.Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}
