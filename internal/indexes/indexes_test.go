package indexes

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func extract(t *testing.T, field string, obj client.Object) []string {
	t.Helper()
	for _, i := range all {
		if i.field == field {
			return i.extract(obj)
		}
	}
	t.Fatalf("no index %s", field)
	return nil
}

func TestIndexValues(t *testing.T) {
	claim := &v1beta1.NodeClaim{Spec: v1beta1.NodeClaimSpec{NodePool: "web"}, Status: v1beta1.NodeClaimStatus{ProviderID: "fake:///a/i-1", InstanceID: "i-1", NodeName: "n1"}}
	pool := &v1beta1.NodePool{Spec: v1beta1.NodePoolSpec{Template: v1beta1.NodeClaimTemplate{Spec: v1beta1.NodeClaimTemplateSpec{NodeClassRef: v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"}}}}}
	cases := []struct {
		field string
		obj   client.Object
		want  []string
	}{
		{NodeProviderID, &corev1.Node{Spec: corev1.NodeSpec{ProviderID: "fake:///a/i-1"}}, []string{"fake:///a/i-1"}},
		{NodeProviderID, &corev1.Node{}, nil},
		{PodNodeName, &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}, []string{"n1"}},
		{PodNodeName, &corev1.Pod{}, nil},
		{ClaimNodePool, claim, []string{"web"}},
		{ClaimProviderID, claim, []string{"fake:///a/i-1"}},
		{ClaimNodeName, claim, []string{"n1"}},
		{ClaimNodeName, &v1beta1.NodeClaim{}, nil},
		{ClaimInstanceID, claim, []string{"i-1"}},
		{ClaimInstanceID, &v1beta1.NodeClaim{}, nil},
		{PoolNodeClass, pool, []string{"FakeNodeClass/default"}},
	}
	for _, tc := range cases {
		if got := extract(t, tc.field, tc.obj); !slices.Equal(got, tc.want) {
			t.Errorf("%s of %T = %v, want %v", tc.field, tc.obj, got, tc.want)
		}
	}
}
