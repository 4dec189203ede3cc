package simprovider

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

func configSpec(taints []corev1.Taint, args ...v1alpha1.Arg) v1alpha1.SimConfigSpec {
	return v1alpha1.SimConfigSpec{JoinConfiguration: v1alpha1.JoinConfiguration{
		NodeRegistration: v1alpha1.NodeRegistrationOptions{Taints: taints, KubeletExtraArgs: args},
	}}
}

func TestBootstrapDataReadsLabelsTaintsAndMaxPods(t *testing.T) {
	taint := corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	spec := configSpec([]corev1.Taint{taint},
		v1alpha1.Arg{Name: "node-labels", Value: "team=a,example.com/tier=gold"},
		v1alpha1.Arg{Name: "max-pods", Value: "42"},
		v1alpha1.Arg{Name: "v", Value: "2"})
	data, err := BootstrapDataFor(spec)
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := data.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBootstrapData(encoded)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 2 || got.Labels["team"] != "a" || got.Labels["example.com/tier"] != "gold" {
		t.Errorf("labels = %v, want team=a and example.com/tier=gold", got.Labels)
	}
	if len(got.Taints) != 1 || got.Taints[0].Key != "dedicated" || got.Taints[0].Value != "batch" || got.Taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("taints = %v, want dedicated=batch:NoSchedule", got.Taints)
	}
	if got.MaxPods == nil || *got.MaxPods != 42 {
		t.Errorf("maxPods = %v, want 42", got.MaxPods)
	}
}

func TestBootstrapDataRefusesWhatAKubeletRefuses(t *testing.T) {
	for name, arg := range map[string]v1alpha1.Arg{
		"a label without a value": {Name: "node-labels", Value: "team"},
		"a bad label key":         {Name: "node-labels", Value: "-team=a"},
		"a bad label value":       {Name: "node-labels", Value: "team=a b"},
		"max-pods not a number":   {Name: "max-pods", Value: "many"},
		"max-pods zero":           {Name: "max-pods", Value: "0"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := BootstrapDataFor(configSpec(nil, arg))
			if err == nil || !strings.Contains(err.Error(), arg.Name) {
				t.Errorf("error = %v, want one naming %s", err, arg.Name)
			}
		})
	}
}

func TestBootstrapDataOfAnEmptyConfigIsEmpty(t *testing.T) {
	data, err := BootstrapDataFor(v1alpha1.SimConfigSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Labels) != 0 || len(data.Taints) != 0 || data.MaxPods != nil {
		t.Errorf("data = %+v, want nothing", data)
	}
}
