package claimtemplate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestStaleSaysDriftedBeforeExpired(t *testing.T) {
	launched := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	pool := &v1beta1.NodePool{Spec: v1beta1.NodePoolSpec{Template: v1beta1.NodeClaimTemplate{Spec: v1beta1.NodeClaimTemplateSpec{ExpireAfter: &v1beta1.ExpiryDuration{Duration: &day}}}}}
	never := &v1beta1.NodePool{Spec: v1beta1.NodePoolSpec{Template: v1beta1.NodeClaimTemplate{Spec: v1beta1.NodeClaimTemplateSpec{ExpireAfter: &v1beta1.ExpiryDuration{}}}}}
	claim := func(hash string) *v1beta1.NodeClaim {
		return &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(launched)}, Status: v1beta1.NodeClaimStatus{TemplateHash: hash}}
	}
	// "a" is the current template's hash.
	cases := []struct {
		name string
		pool *v1beta1.NodePool
		hash string
		now  time.Time
		want v1beta1.DisruptionReason
	}{
		{"fresh", pool, "a", launched.Add(time.Hour), ""},
		{"not launched yet", pool, "", launched.Add(time.Hour), ""},
		{"drifted", pool, "b", launched.Add(time.Hour), v1beta1.DisruptionDrifted},
		{"expired at the instant", pool, "a", launched.Add(day), v1beta1.DisruptionExpired},
		{"drifted and expired", pool, "b", launched.Add(2 * day), v1beta1.DisruptionDrifted},
		{"never expires", never, "a", launched.Add(1000 * day), ""},
	}
	for _, c := range cases {
		if got := Stale(c.pool, claim(c.hash), Current{Hash: "a"}, c.now); got != c.want {
			t.Errorf("%s: Stale = %q, want %q", c.name, got, c.want)
		}
	}
}

// A standby claim made for another spec.standby shape has drifted; the same claim asked
// to run has not, nor a claim made before the shape was recorded.
func TestAStandbyNodeOfAnOldShapeHasDrifted(t *testing.T) {
	pool := &v1beta1.NodePool{}
	pool.Spec.Standby.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	claim := NewStandbyClaim(pool, "zone-a", []string{v1beta1.CapacityTypeOnDemand})
	if ShapeDrifted(pool, claim) || Stale(pool, claim, Current{}, time.Now()) != "" {
		t.Fatal("a standby claim of the current shape has drifted")
	}
	pool.Spec.Standby.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	if !ShapeDrifted(pool, claim) || Stale(pool, claim, Current{}, time.Now()) != v1beta1.DisruptionDrifted {
		t.Fatal("a standby claim of the old shape has not drifted")
	}
	running := claim.DeepCopy()
	running.Spec.DesiredState = v1beta1.DesiredRunning
	if ShapeDrifted(pool, running) {
		t.Fatal("a running claim drifted with the standby shape")
	}
	older := claim.DeepCopy()
	delete(older.Annotations, v1beta1.AnnotationStandbyShapeHash)
	if ShapeDrifted(pool, older) {
		t.Fatal("a claim made before shapes were recorded has drifted")
	}
}

// A node whose image its class no longer resolves to has drifted, though no spec
// changed; one whose image is unknown, or whose class resolves no image now, has not.
func TestANodeOnAnImageItsClassNoLongerResolvesHasDrifted(t *testing.T) {
	pool := &v1beta1.NodePool{}
	on := func(image string) *v1beta1.NodeClaim {
		return &v1beta1.NodeClaim{Status: v1beta1.NodeClaimStatus{TemplateHash: "a", ImageID: image}}
	}
	cases := []struct {
		name   string
		image  string
		images []string
		want   bool
	}{
		{"on a resolved image", "ami-new", []string{"ami-new", "ami-arm"}, false},
		{"on an image no longer resolved", "ami-old", []string{"ami-new", "ami-arm"}, true},
		{"image unknown", "", []string{"ami-new"}, false},
		{"the class resolves no image", "ami-old", nil, false},
	}
	for _, c := range cases {
		if got := ImageDrifted(on(c.image), c.images); got != c.want {
			t.Errorf("%s: ImageDrifted = %v, want %v", c.name, got, c.want)
		}
		want := v1beta1.DisruptionReason("")
		if c.want {
			want = v1beta1.DisruptionDrifted
		}
		if got := Stale(pool, on(c.image), Current{Hash: "a", Images: c.images}, time.Now()); got != want {
			t.Errorf("%s: Stale = %q, want %q", c.name, got, want)
		}
	}
}

// A node launched with another instance profile than its class launches with now (its
// spec.role changed) has drifted, with the template unchanged; a node whose profile is
// not recorded, or a class without a profile now (a role that does not resolve), is not.
//
// On main before the change, claims recorded no profile and Current had none (the test
// does not compile there): a node on another profile with its class's template hash,
// the first case, was not drifted.
func TestANodeOnAnOldInstanceProfileHasDrifted(t *testing.T) {
	pool := &v1beta1.NodePool{}
	claim := func(profile string) *v1beta1.NodeClaim {
		return &v1beta1.NodeClaim{Status: v1beta1.NodeClaimStatus{TemplateHash: "a", InstanceProfile: profile}}
	}
	cases := []struct {
		name, claimed, current string
		want                   v1beta1.DisruptionReason
	}{
		{"another profile", "stratos_prod_old", "stratos_prod_new", v1beta1.DisruptionDrifted},
		{"the current profile", "stratos_prod_new", "stratos_prod_new", ""},
		{"profile not recorded", "", "stratos_prod_new", ""},
		{"class without a profile now", "stratos_prod_old", "", ""},
	}
	for _, c := range cases {
		if got := Stale(pool, claim(c.claimed), Current{Hash: "a", InstanceProfile: c.current}, time.Now()); got != c.want {
			t.Errorf("%s: Stale = %q, want %q", c.name, got, c.want)
		}
	}
}
