package coexist_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/test/harness"
)

// detector is an auto Detector reading the API server as cfg's user.
func detector(t *testing.T, cfg *rest.Config, status types.NamespacedName) *podscope.Detector {
	t.Helper()
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &podscope.Detector{Mode: podscope.Auto, Metadata: md, StatusConfigMap: status}
}

func expectDecision(t *testing.T, d *podscope.Detector, want podscope.Decision) {
	t.Helper()
	if got := d.Decision(); got != want {
		t.Errorf("decision %+v, want %+v", got, want)
	}
	if got := d.Current(); got != want.Scope {
		t.Errorf("scope in effect %s, want %s", got, want.Scope)
	}
}

// The detector's looks against a real API server: Karpenter's NodePools of before 1.0
// (v1beta1), a status ConfigMap where the flag says, a look the user may not make, and a
// look that fails.
func TestDetectorLooks(t *testing.T) {
	env := harness.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	noneFound := podscope.Decision{Scope: podscope.All, Reason: podscope.ReasonNoneFound}

	t.Run("Karpenter before 1.0, served as v1beta1", func(t *testing.T) {
		d := detector(t, env.Config, types.NamespacedName{})
		d.Check(ctx)
		expectDecision(t, d, noneFound) // no such resource yet
		installKarpenterCRD(t, env.Config, "v1beta1")
		d.Check(ctx)
		expectDecision(t, d, noneFound) // the kind, and no NodePool
		pool := karpenterNodePool("v1beta1")
		if err := env.Client.Create(ctx, pool); err != nil {
			t.Fatal(err)
		}
		d.Check(ctx)
		expectDecision(t, d, podscope.Decision{Scope: podscope.OptedIn, Reason: podscope.ReasonKarpenter})
		if err := env.Client.Delete(ctx, pool); err != nil {
			t.Fatal(err)
		}
		d.Check(ctx)
		expectDecision(t, d, noneFound)
	})

	t.Run("the status ConfigMap where the flag says", func(t *testing.T) {
		elsewhere := types.NamespacedName{Namespace: "autoscaling", Name: "ca-status"}
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: elsewhere.Namespace}}); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere.Namespace, Name: elsewhere.Name}}); err != nil {
			t.Fatal(err)
		}
		atDefault := detector(t, env.Config, types.NamespacedName{})
		atDefault.Check(ctx)
		expectDecision(t, atDefault, noneFound)
		told := detector(t, env.Config, elsewhere)
		told.Check(ctx)
		expectDecision(t, told, podscope.Decision{Scope: podscope.OptedIn, Reason: podscope.ReasonClusterAutoscaler})
	})

	t.Run("a user who may not look", func(t *testing.T) {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "no-permissions"}
		d := detector(t, cfg, types.NamespacedName{})
		d.Check(ctx)
		expectDecision(t, d, podscope.Decision{Scope: podscope.All, Reason: podscope.ReasonNotPermitted})
	})

	t.Run("a look that fails keeps the scope", func(t *testing.T) {
		d := detector(t, env.Config, types.NamespacedName{})
		d.Check(ctx)
		expectDecision(t, d, noneFound)
		// Nothing listens on port 1 of loopback: the look gets no answer.
		unreachable, err := metadata.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		d.Metadata = unreachable
		d.Check(ctx)
		expectDecision(t, d, noneFound)

		first := &podscope.Detector{Mode: podscope.Auto, Metadata: unreachable}
		first.Check(ctx)
		expectDecision(t, first, podscope.Decision{Scope: podscope.OptedIn, Reason: podscope.ReasonStarting})
	})
}
