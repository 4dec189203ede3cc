package podscope

import "testing"

func TestDecide(t *testing.T) {
	noneFound := Decision{Scope: All, Reason: ReasonNoneFound}
	karpenter := Decision{Scope: OptedIn, Reason: ReasonKarpenter}
	for _, tc := range []struct {
		name   string
		mode   Scope
		found  Findings
		before Decision
		want   Decision
	}{
		{"all whatever runs", All, Findings{Present, Present}, Decision{}, Decision{All, ReasonFlag}},
		{"opted-in whatever runs", OptedIn, Findings{Absent, Absent}, Decision{}, Decision{OptedIn, ReasonFlag}},
		{"auto alone", Auto, Findings{Absent, Absent}, Decision{}, noneFound},
		{"auto beside Karpenter", Auto, Findings{Present, Absent}, Decision{}, karpenter},
		{"auto beside Cluster Autoscaler", Auto, Findings{Absent, Present}, noneFound, Decision{OptedIn, ReasonClusterAutoscaler}},
		{"auto beside both", Auto, Findings{Present, Present}, Decision{}, karpenter},
		{"auto: Karpenter gone", Auto, Findings{Absent, Absent}, karpenter, noneFound},
		{"auto: one found, the other check failed", Auto, Findings{Unknown, Present}, noneFound, Decision{OptedIn, ReasonClusterAutoscaler}},
		{"auto: a failed check keeps opted-in", Auto, Findings{Unknown, Absent}, karpenter, karpenter},
		{"auto: a failed check keeps all", Auto, Findings{Absent, Unknown}, noneFound, noneFound},
		{"auto: a failed first check serves opted-in", Auto, Findings{Unknown, Absent}, Decision{}, Decision{OptedIn, ReasonStarting}},
		{"auto: not permitted to look", Auto, Findings{Forbidden, Absent}, Decision{}, Decision{All, ReasonNotPermitted}},
		{"auto: not permitted, but found elsewhere", Auto, Findings{Present, Forbidden}, Decision{}, karpenter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.mode, tc.found, tc.before); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}
