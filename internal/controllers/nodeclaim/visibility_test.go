package nodeclaim

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestNotVisibleYetCountsFromTheLaunch(t *testing.T) {
	created := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	launched := created.Add(time.Minute)
	claim := testClaim(v1beta1.DesiredStandby)
	claim.CreationTimestamp = metav1.NewTime(created)
	claim.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionLaunched, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(launched)}}
	cases := []struct {
		now  time.Time
		want bool
	}{
		{launched.Add(time.Second), true},
		{launched.Add(2*time.Minute - time.Second), true},
		{launched.Add(2 * time.Minute), false},
		{launched.Add(time.Hour), false},
	}
	for _, tc := range cases {
		if got := notVisibleYet(claim, tc.now, 2*time.Minute); got != tc.want {
			t.Errorf("%s after the launch: notVisibleYet = %v, want %v", tc.now.Sub(launched), got, tc.want)
		}
	}
	// A failed launch attempt's condition is not a launch: the claim's creation counts.
	claim.Status.Conditions[0].Status = metav1.ConditionFalse
	if notVisibleYet(claim, created.Add(2*time.Minute+time.Second), 2*time.Minute) {
		t.Error("without a launch, the grace must count from the claim's creation")
	}
}
