package claimtemplate

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

func TestStaleSaysDriftedBeforeExpired(t *testing.T) {
	launched := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	pool := &v1alpha1.NodePool{Spec: v1alpha1.NodePoolSpec{Disruption: v1alpha1.Disruption{ExpireAfter: &v1alpha1.ExpiryDuration{Duration: &day}}}}
	never := &v1alpha1.NodePool{Spec: v1alpha1.NodePoolSpec{Disruption: v1alpha1.Disruption{ExpireAfter: &v1alpha1.ExpiryDuration{}}}}
	claim := func(hash string) *v1alpha1.NodeClaim {
		return &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(launched)}, Status: v1alpha1.NodeClaimStatus{TemplateHash: hash}}
	}
	// "a" is the current template's hash.
	cases := []struct {
		name string
		pool *v1alpha1.NodePool
		hash string
		now  time.Time
		want v1alpha1.DisruptionReason
	}{
		{"fresh", pool, "a", launched.Add(time.Hour), ""},
		{"not launched yet", pool, "", launched.Add(time.Hour), ""},
		{"drifted", pool, "b", launched.Add(time.Hour), v1alpha1.DisruptionDrifted},
		{"expired at the instant", pool, "a", launched.Add(day), v1alpha1.DisruptionExpired},
		{"drifted and expired", pool, "b", launched.Add(2 * day), v1alpha1.DisruptionDrifted},
		{"never expires", never, "a", launched.Add(1000 * day), ""},
	}
	for _, c := range cases {
		if got := Stale(c.pool, claim(c.hash), "a", c.now); got != c.want {
			t.Errorf("%s: Stale = %q, want %q", c.name, got, c.want)
		}
	}
}
