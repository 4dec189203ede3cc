package claimtemplate

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

func pool() *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1alpha1.NodePoolSpec{
			Template: v1alpha1.NodeClaimTemplate{
				Labels:        map[string]v1alpha1.LabelValue{"team": "a"},
				Annotations:   map[string]string{"note": "x"},
				Taints:        []v1alpha1.Taint{{Key: "dedicated", Effect: "NoSchedule"}},
				StartupTaints: []v1alpha1.Taint{{Key: "cni", Effect: "NoExecute"}},
				Requirements:  []v1alpha1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64"}}},
				NodeClassRef:  v1alpha1.NodeClassReference{Group: "stratos.sh", Kind: "FakeNodeClass", Name: "default"},
			},
			Standby: v1alpha1.Standby{Min: 3},
		},
	}
}

func TestNewClaimCarriesTheTemplate(t *testing.T) {
	claim := NewClaim(pool(), v1alpha1.DesiredStandby)
	if claim.GenerateName != "web-" || claim.Spec.NodePool != "web" || claim.Spec.DesiredState != v1alpha1.DesiredStandby {
		t.Fatalf("unexpected claim: %+v", claim)
	}
	if claim.Labels["team"] != "a" || claim.Labels[v1alpha1.LabelNodePool] != "web" || claim.Annotations["note"] != "x" {
		t.Errorf("labels %v annotations %v", claim.Labels, claim.Annotations)
	}
	if len(claim.Spec.Taints) != 1 || len(claim.Spec.StartupTaints) != 1 || len(claim.Spec.Requirements) != 1 || claim.Spec.NodeClassRef.Name != "default" {
		t.Errorf("spec does not carry the template: %+v", claim.Spec)
	}
	// The claim must not share slices with the pool.
	claim.Spec.Taints[0].Key = "changed"
	if pool().Spec.Template.Taints[0].Key != "dedicated" {
		t.Error("the claim shares its taints with the pool")
	}
}

func TestHashChangesWithTemplateAndClassOnly(t *testing.T) {
	class := &v1alpha1.FakeNodeClass{Spec: v1alpha1.FakeNodeClassSpec{Zones: []string{"fake-1a"}}}
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
	class := &v1alpha1.FakeNodeClass{Spec: v1alpha1.FakeNodeClassSpec{Zones: []string{"fake-1a"}}}
	claim := NewClaim(pool(), v1alpha1.DesiredStandby)
	if claim.Annotations[v1alpha1.AnnotationTemplateHash] != TemplateHash(pool()) {
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
	delete(legacy.Annotations, v1alpha1.AnnotationTemplateHash)
	if got, _ := ClaimHash(legacy, pool(), class); got != current {
		t.Fatal("a claim without the annotation is taken as made from the current template")
	}
}

// What a pool's nodes should be made of carries the images its class resolved to,
// which the hash of its spec does not.
func TestCurrentCarriesTheResolvedImages(t *testing.T) {
	pool := &v1alpha1.NodePool{}
	class := &v1alpha1.AWSNodeClass{}
	before, err := CurrentOf(pool, class)
	if err != nil {
		t.Fatal(err)
	}
	class.Status.AMIs = []v1alpha1.ResolvedAMI{{ID: "ami-new", Architecture: "amd64"}}
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
