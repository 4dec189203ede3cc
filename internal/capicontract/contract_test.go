package capicontract

import "testing"

func TestLatestVersion(t *testing.T) {
	cases := []struct {
		labels map[string]string
		want   string
		ok     bool
	}{
		{map[string]string{Label: "v1beta1"}, "v1beta1", true},
		{map[string]string{Label: "v1alpha3_v1beta1_v1alpha4"}, "v1beta1", true},
		{map[string]string{Label: "v1beta2_v1"}, "v1", true},
		{map[string]string{"cluster.x-k8s.io/v1beta1": "v1alpha1"}, "", false},
		{map[string]string{Label: ""}, "", false},
		{nil, "", false},
	}
	for _, c := range cases {
		got, ok := LatestVersion(c.labels)
		if got != c.want || ok != c.ok {
			t.Errorf("LatestVersion(%v) = %q, %v; want %q, %v", c.labels, got, ok, c.want, c.ok)
		}
	}
}
