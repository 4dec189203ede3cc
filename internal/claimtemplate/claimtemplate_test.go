package claimtemplate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func pool() *v1beta1.NodePool {
	return &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1beta1.NodePoolSpec{
			Template: v1beta1.NodeClaimTemplate{
				TemplateObjectMeta: v1beta1.TemplateObjectMeta{
					Labels:      map[string]v1beta1.LabelValue{"team": "a"},
					Annotations: map[string]string{"note": "x"},
				},
				Spec: v1beta1.NodeClaimTemplateSpec{
					Taints:        []v1beta1.Taint{{Key: "dedicated", Effect: "NoSchedule"}},
					StartupTaints: []v1beta1.Taint{{Key: "cni", Effect: "NoExecute"}},
					Requirements:  []v1beta1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64"}}},
					NodeClassRef:  v1beta1.NodeClassReference{Group: "stratos.sh", Kind: "FakeNodeClass", Name: "default"},
				},
			},
			Standby: v1beta1.Standby{Min: 3},
		},
	}
}

func TestNewClaimCarriesTheTemplate(t *testing.T) {
	claim := NewClaim(pool(), v1beta1.DesiredStandby)
	if claim.GenerateName != "web-" || claim.Spec.NodePool != "web" || claim.Spec.DesiredState != v1beta1.DesiredStandby {
		t.Fatalf("unexpected claim: %+v", claim)
	}
	if claim.Labels["team"] != "a" || claim.Labels[v1beta1.LabelNodePool] != "web" || claim.Annotations["note"] != "x" {
		t.Errorf("labels %v annotations %v", claim.Labels, claim.Annotations)
	}
	if len(claim.Spec.Taints) != 1 || len(claim.Spec.StartupTaints) != 1 || len(claim.Spec.Requirements) != 1 || claim.Spec.NodeClassRef.Name != "default" {
		t.Errorf("spec does not carry the template: %+v", claim.Spec)
	}
	// The claim must not share slices with the pool.
	claim.Spec.Taints[0].Key = "changed"
	if pool().Spec.Template.Spec.Taints[0].Key != "dedicated" {
		t.Error("the claim shares its taints with the pool")
	}
}

func TestHashChangesWithTemplateAndClassOnly(t *testing.T) {
	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Zones: []string{"fake-1a"}}}
	base, err := Hash(pool(), class)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := Hash(pool(), class.DeepCopy())
	if same != base {
		t.Fatalf("equal inputs hash to %s and %s", base, same)
	}
	sized := pool()
	sized.Spec.Standby.Min = 10
	if h, _ := Hash(sized, class); h != base {
		t.Error("changing the standby target must not drift the nodes")
	}
	relabelled := pool()
	relabelled.Spec.Template.Labels["team"] = "b"
	if h, _ := Hash(relabelled, class); h == base {
		t.Error("changing the template must change the hash")
	}
	rezoned := class.DeepCopy()
	rezoned.Spec.Zones = []string{"fake-1b"}
	if h, _ := Hash(pool(), rezoned); h == base {
		t.Error("changing the node class must change the hash")
	}
}

// A claim is made of the template when it is created and of the node class when it
// launches: a template change between the two is drift; a class change before the
// launch is not, since the launch reads the new class.
func TestClaimHashDescribesWhatTheClaimWasMadeFrom(t *testing.T) {
	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Zones: []string{"fake-1a"}}}
	claim := NewClaim(pool(), v1beta1.DesiredStandby)
	if claim.Annotations[v1beta1.AnnotationTemplateHash] != TemplateHash(pool()) {
		t.Fatalf("a new claim must carry the hash of its template, got %v", claim.Annotations)
	}
	current, _ := Hash(pool(), class)
	if got, _ := ClaimHash(claim, pool(), class); got != current {
		t.Fatalf("a claim launched from the current template and class has hash %s, want %s", got, current)
	}

	changed := pool()
	changed.Spec.Template.Labels["team"] = "b"
	now, _ := Hash(changed, class)
	if got, _ := ClaimHash(claim, changed, class); got == now {
		t.Fatal("a claim created before a template change and launched after it must count as drifted")
	}

	rezoned := class.DeepCopy()
	rezoned.Spec.Zones = []string{"fake-1b"}
	now, _ = Hash(pool(), rezoned)
	if got, _ := ClaimHash(claim, pool(), rezoned); got != now {
		t.Fatal("a claim launched with the new node class has not drifted")
	}

	legacy := claim.DeepCopy()
	delete(legacy.Annotations, v1beta1.AnnotationTemplateHash)
	if got, _ := ClaimHash(legacy, pool(), class); got != current {
		t.Fatal("a claim without the annotation is taken as made from the current template")
	}
}

// What a pool's nodes should be made of carries the images its class resolved to,
// which the hash of its spec does not.
func TestCurrentCarriesTheResolvedImages(t *testing.T) {
	pool := &v1beta1.NodePool{}
	class := &v1beta1.EC2NodeClass{}
	before, err := CurrentOf(pool, class)
	if err != nil {
		t.Fatal(err)
	}
	class.Status.AMIs = []v1beta1.ResolvedAMI{{ID: "ami-new", Architecture: "amd64"}}
	after, err := CurrentOf(pool, class)
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash != before.Hash {
		t.Errorf("the hash changed with the class's status: %s, %s", before.Hash, after.Hash)
	}
	if len(before.Images) != 0 || len(after.Images) != 1 || after.Images[0] != "ami-new" {
		t.Errorf("images %v then %v; want none then ami-new", before.Images, after.Images)
	}
}

// A claim boots its kubelet as its pool's template says, with a copy of its own.
func TestNewClaimCarriesTheKubeletConfiguration(t *testing.T) {
	p := pool()
	p.Spec.Template.Spec.Kubelet = &v1beta1.KubeletConfiguration{
		MaxPods:      ptr.To[int32](8),
		KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "5%"},
	}
	claim := NewClaim(p, v1beta1.DesiredRunning)
	if !equality.Semantic.DeepEqual(claim.Spec.Kubelet, p.Spec.Template.Spec.Kubelet) {
		t.Fatalf("claim kubelet %+v, want the template's %+v", claim.Spec.Kubelet, p.Spec.Template.Spec.Kubelet)
	}
	standby := NewStandbyClaim(p, "fake-1a", []string{v1beta1.CapacityTypeOnDemand})
	if !equality.Semantic.DeepEqual(standby.Spec.Kubelet, p.Spec.Template.Spec.Kubelet) {
		t.Fatalf("standby claim kubelet %+v, want the template's", standby.Spec.Kubelet)
	}
	*claim.Spec.Kubelet.MaxPods = 20
	claim.Spec.Kubelet.EvictionHard["memory.available"] = "1Gi"
	if *p.Spec.Template.Spec.Kubelet.MaxPods != 8 || p.Spec.Template.Spec.Kubelet.EvictionHard["memory.available"] != "5%" {
		t.Error("the claim shares its kubelet configuration with the pool")
	}
	if NewClaim(pool(), v1beta1.DesiredRunning).Spec.Kubelet != nil {
		t.Error("a template without a kubelet configuration gives a claim with one")
	}
}

// Changing the kubelet configuration of a pool drifts the claims made before: their
// nodes run another kubelet configuration. A pool without one keeps its hash.
func TestKubeletConfigurationChangesDrift(t *testing.T) {
	class := &v1beta1.FakeNodeClass{}
	before := pool()
	claim := NewClaim(before, v1beta1.DesiredStandby)
	launched, _ := ClaimHash(claim, before, class)
	claim.Status.TemplateHash = launched

	unset := pool()
	unset.Spec.Template.Spec.Kubelet = nil
	if TemplateHash(unset) != TemplateHash(before) {
		t.Fatal("the hash of a template without a kubelet configuration changed")
	}
	for _, change := range []struct {
		name    string
		kubelet *v1beta1.KubeletConfiguration
	}{
		{"max pods set", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](8)}},
		{"kube-reserved set", &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
		{"image GC set", &v1beta1.KubeletConfiguration{ImageGCHighThresholdPercent: ptr.To[int32](90)}},
	} {
		changed := pool()
		changed.Spec.Template.Spec.Kubelet = change.kubelet
		current, _ := Hash(changed, class)
		if !Drifted(claim, current) {
			t.Errorf("%s: a claim of the old configuration has not drifted", change.name)
		}
		again := NewClaim(changed, v1beta1.DesiredStandby)
		again.Status.TemplateHash, _ = ClaimHash(again, changed, class)
		if Drifted(again, current) {
			t.Errorf("%s: a claim of the new configuration has drifted", change.name)
		}
	}
}

// The pool owns its claims, as their controller, and blocks its foreground deletion on
// them: what OwnerReferencesPermissionEnforcement checks against nodepools/finalizers.
func TestNewClaimIsOwnedByItsPoolAndBlocksItsDeletion(t *testing.T) {
	p := pool()
	p.UID = "pool-uid"
	owners := NewClaim(p, v1beta1.DesiredRunning).OwnerReferences
	if len(owners) != 1 {
		t.Fatalf("owner references %+v, want the pool's alone", owners)
	}
	o := owners[0]
	if o.APIVersion != "stratos.sh/v1beta1" || o.Kind != "NodePool" || o.Name != "web" || o.UID != "pool-uid" {
		t.Errorf("owner %+v is not pool web", o)
	}
	if o.Controller == nil || !*o.Controller || o.BlockOwnerDeletion == nil || !*o.BlockOwnerDeletion {
		t.Errorf("owner %+v: want controller and blockOwnerDeletion", o)
	}
}

// expireAfter and terminationGracePeriod say when and how a node is given back, not what
// it is made of: changing them drifts no node. A label, which the node carries, does.
func TestExpiryAndGracePeriodDoNotDrift(t *testing.T) {
	before := TemplateHash(pool())
	changed := pool()
	changed.Spec.Template.Spec.ExpireAfter = &v1beta1.ExpiryDuration{}
	changed.Spec.Template.Spec.TerminationGracePeriod = v1beta1.NewDuration(time.Hour)
	if got := TemplateHash(changed); got != before {
		t.Fatalf("template hash %s after changing expireAfter and terminationGracePeriod, want %s", got, before)
	}
	if changed.Spec.Template.Spec.ExpireAfter == nil || changed.Spec.Template.Spec.TerminationGracePeriod == nil {
		t.Fatal("TemplateHash changed the pool's template")
	}
	changed.Spec.Template.Labels["team"] = "b"
	if TemplateHash(changed) == before {
		t.Fatal("a label change does not change the template hash")
	}
}
