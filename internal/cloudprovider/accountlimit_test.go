package cloudprovider_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// A launch refused by an account limit marks the offerings the limit covers, saying
// which limit; asked again with nothing left outside the limit, the launch fails naming
// the limit rather than saying that every offering is unavailable, and the cloud does
// not refuse it again (nothing more is marked).
func TestAnAccountLimitMarksWhatItCoversAndNamesItselfOnceNothingIsLeft(t *testing.T) {
	s := newSetup(t)
	ctx := context.Background()
	s.cloud.SetFaults(fakecloud.Faults{AccountLimits: []fakecloud.AccountLimit{{Limit: "VcpuLimitExceeded", TypePrefixes: []string{"m5"}, CapacityType: v1beta1.CapacityTypeOnDemand}}})

	var firstExpiry time.Time
	for attempt := 1; attempt <= 2; attempt++ {
		_, err := s.provider.Create(ctx, launchRequest("limited"))
		var cloudErr *cloudprovider.Error
		if !errors.As(err, &cloudErr) || cloudErr.Code != cloudprovider.CodeQuotaExceeded || cloudErr.Limit != "VcpuLimitExceeded" {
			t.Fatalf("attempt %d: %v; want QuotaExceeded naming VcpuLimitExceeded", attempt, err)
		}
		marks := s.marks.List()
		if len(marks) != 3 {
			t.Fatalf("attempt %d: marks %v; want the three zones' m5.large on demand", attempt, marks)
		}
		for _, m := range marks {
			if m.Limit != "VcpuLimitExceeded" || m.Reason != "Create: VcpuLimitExceeded" || m.CapacityType != v1beta1.CapacityTypeOnDemand {
				t.Fatalf("attempt %d: mark %+v; want one of the limit", attempt, m)
			}
		}
		if attempt == 1 {
			firstExpiry = marks[0].Expires
			s.clock.Step(10 * time.Second)
		} else if !marks[0].Expires.Equal(firstExpiry) {
			t.Fatalf("the second attempt marked the offerings again (expiry %s, was %s): the cloud was asked again", marks[0].Expires, firstExpiry)
		}
	}
}
