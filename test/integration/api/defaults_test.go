package api_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The documented defaults (docs/api.md) are what the API server fills in, whether the
// object comes from kubectl (fields absent) or from a Go client (zero-valued structs).
func TestDefaultsOfAMinimalNodePool(t *testing.T) {
	ctx := testContext(t)
	fromYAML := patched(t, basePool, `spec: {windows: [{name: w, minStandby: 2}]}`, "defaults-yaml")
	if err := env.Client.Create(ctx, fromYAML); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, fromYAML) })

	fromGo := &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults-go"},
		Spec: v1beta1.NodePoolSpec{
			Template: v1beta1.NodeClaimTemplate{Spec: v1beta1.NodeClaimTemplateSpec{NodeClassRef: v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"}}},
			Windows:  []v1beta1.Window{{Name: "w", MinStandby: ptr.To[int32](2)}},
		},
	}
	if err := env.Client.Create(ctx, fromGo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, fromGo) })

	want := v1beta1.NodePoolSpec{
		Template: v1beta1.NodeClaimTemplate{Spec: v1beta1.NodeClaimTemplateSpec{
			NodeClassRef: v1beta1.NodeClassReference{Group: "stratos.sh", Kind: "FakeNodeClass", Name: "default"},
			ExpireAfter:  &v1beta1.ExpiryDuration{Duration: ptr.To(720 * time.Hour)},
		}},
		Standby: v1beta1.Standby{
			Min:    0,
			Warmup: v1beta1.Warmup{Timeout: v1beta1.NewDuration(10 * time.Minute), TimeoutAction: v1beta1.WarmupTimeoutTerminate},
		},
		Disruption: v1beta1.Disruption{
			ConsolidationPolicy: v1beta1.ConsolidationWhenEmpty,
			ConsolidateAfter:    v1beta1.NewDuration(30 * time.Second),
			Budgets:             []v1beta1.Budget{{Nodes: "10%"}},
			// Ignore, as Karpenter does: a rebalance recommendation alone moves nothing.
			RebalanceRecommendation: v1beta1.RebalanceIgnore,
		},
		// Node repair is on, with Karpenter's toleration for a NotReady node.
		Repair:  v1beta1.Repair{Enabled: ptr.To(true), NotReadyAfter: v1beta1.NewDuration(30 * time.Minute)},
		Windows: []v1beta1.Window{{Name: "w", Days: "mon-sun", Hours: "0-23", TimeZone: "UTC", PreWarm: v1beta1.NewDuration(10 * time.Minute), MinStandby: ptr.To[int32](2)}},
	}
	for _, name := range []string{"defaults-yaml", "defaults-go"} {
		got := &v1beta1.NodePool{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Spec); diff != "" {
			t.Errorf("%s: defaults differ (-want +got):\n%s", name, diff)
		}
	}
}

// A learned warm pool asked for with nothing set forecasts the 90th percentile of
// 15-minute intervals of UTC days, with a half-life of a week; preStart runs 2 minutes
// ahead of a peak seen on 3 of the last 7 days.
func TestDefaultsOfALearnedWarmPool(t *testing.T) {
	ctx := testContext(t)
	pool := patched(t, basePool, `spec: {standby: {learned: {preStart: {}}}}`, "defaults-learned")
	if err := env.Client.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, pool) })
	got := &v1beta1.NodePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "defaults-learned"}, got); err != nil {
		t.Fatal(err)
	}
	want := &v1beta1.LearnedStandby{
		Percentile: 90, Interval: v1beta1.NewDuration(15 * time.Minute), HalfLife: v1beta1.NewDuration(168 * time.Hour), TimeZone: "UTC",
		PreStart: &v1beta1.PreStart{Lead: v1beta1.NewDuration(2 * time.Minute), MinDays: 3},
	}
	if diff := cmp.Diff(want, got.Spec.Standby.Learned); diff != "" {
		t.Errorf("defaults differ (-want +got):\n%s", diff)
	}
}

func TestDefaultsOfAClaimAndTheNodeClasses(t *testing.T) {
	ctx := testContext(t)
	claim := patched(t, baseClaim, `{}`, "defaults-claim")
	aws := patched(t, baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 20Gi}}]}`, "defaults-aws")
	fake := patched(t, baseFakeClass, `spec: {faults: {errors: [{operation: Start, percent: 5}]}}`, "defaults-fake")
	for _, obj := range []client.Object{claim, aws, fake} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}

	gotClaim := &v1beta1.NodeClaim{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "defaults-claim"}, gotClaim); err != nil {
		t.Fatal(err)
	}
	if gotClaim.Spec.DesiredState != v1beta1.DesiredRunning {
		t.Errorf("claim desiredState defaults to %q, want Running", gotClaim.Spec.DesiredState)
	}

	gotAWS := &v1beta1.EC2NodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "defaults-aws"}, gotAWS); err != nil {
		t.Fatal(err)
	}
	wantIMDS := v1beta1.MetadataOptions{HTTPEndpoint: "enabled", HTTPProtocolIPv6: "disabled", HTTPPutResponseHopLimit: 1, HTTPTokens: "required"}
	if diff := cmp.Diff(wantIMDS, gotAWS.Spec.MetadataOptions); diff != "" {
		t.Errorf("metadataOptions defaults differ (-want +got):\n%s", diff)
	}
	ebs := gotAWS.Spec.BlockDeviceMappings[0].EBS
	if ebs.VolumeType != "gp3" || !ptr.Deref(ebs.Encrypted, false) || !ptr.Deref(ebs.DeleteOnTermination, false) {
		t.Errorf("ebs defaults: volumeType %q encrypted %v deleteOnTermination %v, want gp3, true, true", ebs.VolumeType, ebs.Encrypted, ebs.DeleteOnTermination)
	}

	gotFake := &v1beta1.FakeNodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "defaults-fake"}, gotFake); err != nil {
		t.Fatal(err)
	}
	if got := gotFake.Spec.Faults.Errors[0].Error; got != v1beta1.FakeErrorInternal {
		t.Errorf("fault error defaults to %q, want Internal", got)
	}
}
