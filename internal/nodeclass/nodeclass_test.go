package nodeclass

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func awsClass(generation int64, ready *metav1.Condition) *v1beta1.EC2NodeClass {
	class := &v1beta1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: generation}}
	if ready != nil {
		class.Status.Conditions = []metav1.Condition{*ready}
	}
	return class
}

func TestReady(t *testing.T) {
	readyAt := func(generation int64) *metav1.Condition {
		return &metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Resolved", ObservedGeneration: generation}
	}
	deleting := awsClass(2, readyAt(2))
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	cases := []struct {
		name   string
		class  client.Object
		ready  bool
		reason string
	}{
		{"a fake class has nothing to resolve", &v1beta1.FakeNodeClass{}, true, ""},
		{"resolved for its spec", awsClass(2, readyAt(2)), true, ""},
		{"never resolved", awsClass(1, nil), false, ReasonNotResolved},
		{"resolved for an older spec", awsClass(3, readyAt(2)), false, ReasonNotResolved},
		{"did not resolve", awsClass(2, &metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: "SubnetsNotFound",
			Message: "no subnet matches", ObservedGeneration: 2}), false, "SubnetsNotFound"},
		{"being deleted", deleting, false, ReasonDeleting},
	}
	for _, c := range cases {
		ready, reason, message := Ready(c.class)
		if ready != c.ready || reason != c.reason {
			t.Errorf("%s: Ready = %v, %q; want %v, %q", c.name, ready, reason, c.ready, c.reason)
		}
		if !ready && !strings.Contains(message, "EC2NodeClass default") {
			t.Errorf("%s: message %q does not name the class", c.name, message)
		}
	}
	_, _, message := Ready(cases[4].class)
	if !strings.Contains(message, "no subnet matches") {
		t.Errorf("message %q does not carry the condition's", message)
	}
}

func TestImages(t *testing.T) {
	class := awsClass(1, nil)
	class.Status.AMIs = []v1beta1.ResolvedAMI{{ID: "ami-1", Architecture: "amd64"}, {ID: "ami-2", Architecture: "arm64"}}
	if got := Images(class); !slices.Equal(got, []string{"ami-1", "ami-2"}) {
		t.Errorf("Images = %v", got)
	}
	if got := Images(awsClass(1, nil)); got != nil {
		t.Errorf("Images of an unresolved class = %v; want none", got)
	}
	if got := Images(&v1beta1.FakeNodeClass{}); got != nil {
		t.Errorf("Images of a fake class = %v; want none", got)
	}
}

// The KMS keys a class's volumes use, each once, for the message of a launch EC2 ended
// because one cannot be used; none for volumes on the account's default key, or for a
// class of another cloud.
func TestEncryptionKeys(t *testing.T) {
	class := &v1beta1.EC2NodeClass{}
	class.Spec.BlockDeviceMappings = []v1beta1.BlockDeviceMapping{
		{DeviceName: "/dev/xvda", EBS: v1beta1.BlockDevice{KMSKeyID: "arn:aws:kms:us-east-1:123456789012:key/root"}},
		{DeviceName: "/dev/xvdb", EBS: v1beta1.BlockDevice{}},
		{DeviceName: "/dev/xvdc", EBS: v1beta1.BlockDevice{KMSKeyID: "arn:aws:kms:us-east-1:123456789012:key/root"}},
		{DeviceName: "/dev/xvdd", EBS: v1beta1.BlockDevice{KMSKeyID: "alias/data"}},
	}
	if got, want := EncryptionKeys(class), []string{"arn:aws:kms:us-east-1:123456789012:key/root", "alias/data"}; !slices.Equal(got, want) {
		t.Errorf("EncryptionKeys = %v; want %v", got, want)
	}
	if got := EncryptionKeys(&v1beta1.FakeNodeClass{}); got != nil {
		t.Errorf("a FakeNodeClass's keys are %v; want none", got)
	}
}

func capiClass(standby string) *v1beta1.ClusterAPINodeClass {
	class := &v1beta1.ClusterAPINodeClass{ObjectMeta: metav1.ObjectMeta{Name: "metal", Generation: 1}}
	class.Spec.InfrastructureTemplateRef = v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "workers"}
	class.Spec.InstanceTypes = []v1beta1.ClusterAPIInstanceType{
		{Name: "small"},
		{Name: "big", InfrastructureTemplateRef: &v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "big"}},
		{Name: "vm", InfrastructureTemplateRef: &v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "VSphereMachineTemplate", Name: "vm"}},
	}
	class.Status.Standby = standby
	return class
}

// A ClusterAPINodeClass is ready as an EC2NodeClass is: once its Ready condition is True
// for its current spec.
func TestReadyClusterAPI(t *testing.T) {
	class := capiClass(v1beta1.ClusterAPIStandbySupported)
	if ready, reason, _ := Ready(class); ready || reason != ReasonNotResolved {
		t.Errorf("an unresolved class: Ready = %v, %q; want false, %q", ready, reason, ReasonNotResolved)
	}
	class.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: "TemplateNotFound",
		Message: "KubeadmConfigTemplate default/workers not found", ObservedGeneration: 1}}
	ready, reason, message := Ready(class)
	if ready || reason != "TemplateNotFound" || !strings.Contains(message, "ClusterAPINodeClass metal") || !strings.Contains(message, "default/workers") {
		t.Errorf("a class whose template is missing: Ready = %v, %q, %q", ready, reason, message)
	}
	class.Status.Conditions[0].Status = metav1.ConditionTrue
	if ready, _, _ := Ready(class); !ready {
		t.Error("a class Ready for its generation is not ready")
	}
}

// Only a ClusterAPINodeClass whose infrastructure Stratos cannot power off refuses
// standby, and its message names the machine kinds.
func TestCanStandBy(t *testing.T) {
	cases := []struct {
		name  string
		class client.Object
		want  bool
	}{
		{"a fake class", &v1beta1.FakeNodeClass{}, true},
		{"an EC2 class", &v1beta1.EC2NodeClass{}, true},
		{"a CAPI class with a power interface", capiClass(v1beta1.ClusterAPIStandbySupported), true},
		{"a CAPI class not resolved yet", capiClass(""), true},
		{"a CAPI class without a power interface", capiClass(v1beta1.ClusterAPIStandbyUnsupported), false},
	}
	for _, c := range cases {
		ok, reason, message := CanStandBy(c.class)
		if ok != c.want {
			t.Errorf("%s: CanStandBy = %v; want %v", c.name, ok, c.want)
		}
		if !ok && (reason != ReasonStandbyUnsupported || !strings.Contains(message, "Metal3Machine.infrastructure.cluster.x-k8s.io, VSphereMachine.infrastructure.cluster.x-k8s.io")) {
			t.Errorf("%s: reason %q, message %q; want %s naming both machine kinds once", c.name, reason, message, ReasonStandbyUnsupported)
		}
	}
}
