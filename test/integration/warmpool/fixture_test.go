// Package warmpool_test runs the warm-pool controllers against a real kube-apiserver,
// the fake cloud and its kubelet simulator, at a time scale that keeps the tests fast.
package warmpool_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// fixture is one test's cluster, with the warm-pool tests' own helpers.
type fixture struct{ *stack.Fixture }

func newFixture(t *testing.T, tune func(*nodeclaim.Options)) *fixture {
	return &fixture{stack.NewFixture(t, tune)}
}

const clusterName = stack.ClusterName

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// trueSince is when the claim's condition of that type turned True; the test fails when
// it is not True.
func trueSince(t *testing.T, claim *v1beta1.NodeClaim, conditionType string) time.Time {
	t.Helper()
	c := meta.FindStatusCondition(claim.Status.Conditions, conditionType)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("claim %s: %s is not True: %+v", claim.Name, conditionType, claim.Status.Conditions)
	}
	return c.LastTransitionTime.Time
}
