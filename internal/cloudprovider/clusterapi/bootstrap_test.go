package clusterapi

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The node-labels value is sorted k=v pairs joined by commas, the same however the map
// iterates.
func TestNodeLabelsValue(t *testing.T) {
	got := NodeLabelsValue(map[string]string{"stratos.sh/nodepool": "default", "a": "1", "node.kubernetes.io/instance-type": "m5.large"})
	if want := "a=1,node.kubernetes.io/instance-type=m5.large,stratos.sh/nodepool=default"; got != want {
		t.Errorf("node-labels %q, want %q", got, want)
	}
}

// objectOf reads a bootstrap config as JSON.
func objectOf(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A KubeadmConfig registers its Node with the launch's taints after the template's own,
// and with the node-labels flag of the labels the kubelet may set itself: the template's
// node labels, the launch's over them, and none of the kubernetes.io labels the kubelet
// refuses (node-role.kubernetes.io/...). Its other kubelet flags stay.
func TestWithNodeRegistrationKubeadm(t *testing.T) {
	config := objectOf(t, `{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta2","kind":"KubeadmConfig","spec":{
		"joinConfiguration":{"nodeRegistration":{
			"taints":[{"key":"example.com/template","effect":"NoSchedule"},{"key":"stratos.sh/standby","effect":"NoSchedule","value":"old"}],
			"kubeletExtraArgs":[{"name":"max-pods","value":"50"},{"name":"node-labels","value":"rack=r1,stratos.sh/nodepool=old"}]}}}}`)
	labels := map[string]string{
		"stratos.sh/nodepool":              "default",
		"stratos.sh/nodeclaim":             "default-abc",
		"node-role.kubernetes.io/worker":   "",
		"node.kubernetes.io/instance-type": "m5.large",
		"topology.kubernetes.io/zone":      "rack-a",
		"kubernetes.io/arch":               "amd64",
		"example.k8s.io/not-the-kubelets":  "x",
		"team":                             "blue",
	}
	taints := []corev1.Taint{{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule}, {Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoExecute}}
	if err := withNodeRegistration(config, labels, taints, nil); err != nil {
		t.Fatal(err)
	}
	registration, _, _ := unstructured.NestedMap(config.Object, "spec", "joinConfiguration", "nodeRegistration")
	gotTaints, _ := json.Marshal(registration["taints"])
	wantTaints := `[{"effect":"NoSchedule","key":"example.com/template"},{"effect":"NoSchedule","key":"stratos.sh/standby"},{"effect":"NoExecute","key":"gpu","value":"yes"}]`
	if string(gotTaints) != wantTaints {
		t.Errorf("taints %s, want %s", gotTaints, wantTaints)
	}
	gotArgs, _ := json.Marshal(registration["kubeletExtraArgs"])
	wantArgs := `[{"name":"max-pods","value":"50"},{"name":"node-labels","value":"kubernetes.io/arch=amd64,node.kubernetes.io/instance-type=m5.large,rack=r1,stratos.sh/nodeclaim=default-abc,stratos.sh/nodepool=default,team=blue,topology.kubernetes.io/zone=rack-a"}]`
	if string(gotArgs) != wantArgs {
		t.Errorf("kubeletExtraArgs %s, want %s", gotArgs, wantArgs)
	}
}

// Another bootstrap kind gets the node registration when its template gave it a join
// configuration, even an empty one, and is left alone without.
func TestWithNodeRegistrationOtherKinds(t *testing.T) {
	labels := map[string]string{"stratos.sh/nodepool": "default"}
	shaped := objectOf(t, `{"kind":"SimConfig","spec":{"joinConfiguration":{}}}`)
	if err := withNodeRegistration(shaped, labels, nil, nil); err != nil {
		t.Fatal(err)
	}
	args, _, _ := unstructured.NestedSlice(shaped.Object, "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs")
	if got, _ := json.Marshal(args); string(got) != `[{"name":"node-labels","value":"stratos.sh/nodepool=default"}]` {
		t.Errorf("kubeletExtraArgs %s", got)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(shaped.Object, "spec", "joinConfiguration", "nodeRegistration", "taints"); found {
		t.Errorf("taints set without any to set: %v", shaped.Object)
	}

	other := objectOf(t, `{"kind":"TalosConfig","spec":{"generateType":"worker"}}`)
	if err := withNodeRegistration(other, labels, []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}}, &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](20)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(other.Object); string(got) != `{"kind":"TalosConfig","spec":{"generateType":"worker"}}` {
		t.Errorf("a config without kubeadm's shape changed: %s", got)
	}
}
