package api_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Objects of the v1beta1 shape that the API server must take: the template's metadata
// and spec, limits on any resource, the os requirement and Karpenter v1's spellings.
var validPools = []struct{ name, patch string }{
	{"template metadata and spec", `spec: {template: {metadata: {labels: {team: a}, annotations: {example.com/owner: a}}, spec: {taints: [{key: dedicated, effect: NoSchedule}]}}}`},
	{"GPU limit", `spec: {limits: {nvidia.com/gpu: 4}}`},
	{"limits on every kind of resource", `spec: {limits: {nodes: 10, cpu: "64", memory: 256Gi, ephemeral-storage: 1Ti, nvidia.com/gpu: "8", example.com/fpga: 2}}`},
	{"zero limits", `spec: {limits: {nodes: 0, cpu: "0"}}`},
	{"os In linux", `spec: {template: {spec: {requirements: [{key: kubernetes.io/os, operator: In, values: [linux]}]}}}`},
	{"WhenEmptyOrUnderutilized", `spec: {disruption: {consolidationPolicy: WhenEmptyOrUnderutilized}}`},
	{"expiry and grace period", `spec: {template: {spec: {expireAfter: Never, terminationGracePeriod: 1h}}}`},
}

func TestV1beta1PoolsAreAccepted(t *testing.T) {
	for i, tc := range validPools {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			obj := patched(t, basePool, tc.patch, fmt.Sprintf("valid-%d", i))
			if err := env.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
				t.Fatalf("the API server refused %s: %v", tc.patch, err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
		})
	}
}

// A NodePool of the shape before v1beta1 (or Karpenter v1beta1's) is refused, not
// pruned into a different pool: with strict field validation, kubectl's default, every
// field that moved is an unknown field named by its path.
func TestTheShapeBeforeV1beta1IsRefused(t *testing.T) {
	for i, tc := range []struct{ name, patch, field string }{
		{"nodeClassRef on the template", `spec: {template: {nodeClassRef: {kind: FakeNodeClass, name: default}}}`, "spec.template.nodeClassRef"},
		{"requirements on the template", `spec: {template: {requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]}}`, "spec.template.requirements"},
		{"labels on the template", `spec: {template: {labels: {team: a}}}`, "spec.template.labels"},
		{"expireAfter under disruption", `spec: {disruption: {expireAfter: 720h}}`, "spec.disruption.expireAfter"},
		{"drainTimeout under disruption", `spec: {disruption: {drainTimeout: 15m}}`, "spec.disruption.drainTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			obj := patched(t, basePool, tc.patch, fmt.Sprintf("old-shape-%d", i))
			err := env.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))
			if err == nil {
				_ = env.Client.Delete(ctx, obj)
				t.Fatalf("the API server accepted %s", tc.patch)
			}
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "`+tc.field+`"`) {
				t.Fatalf("want a strict decoding error naming %s, got:\n%v", tc.field, err)
			}
		})
	}
}
