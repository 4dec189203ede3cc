package clusterapinodeclass

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
)

type unusedPower struct{ clusterapi.Power }

// A class stands by only when every infrastructure template it names makes machines of
// a kind Stratos can power off and on: the class's and each instance type's own. The
// bootstrap template's kind does not matter.
func TestStandbyOf(t *testing.T) {
	infra := func(kind string) v1beta1.ClusterAPITemplateReference {
		return v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: kind, Name: "t"}
	}
	powers := clusterapi.Powers{{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Machine"}: unusedPower{}}
	class := func(perType ...string) *v1beta1.ClusterAPINodeClass {
		c := &v1beta1.ClusterAPINodeClass{}
		c.Spec.BootstrapTemplateRef = v1beta1.ClusterAPITemplateReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "t"}
		c.Spec.InfrastructureTemplateRef = infra("Metal3MachineTemplate")
		c.Spec.InstanceTypes = []v1beta1.ClusterAPIInstanceType{{Name: "plain"}}
		for _, kind := range perType {
			ref := infra(kind)
			c.Spec.InstanceTypes = append(c.Spec.InstanceTypes, v1beta1.ClusterAPIInstanceType{Name: kind, InfrastructureTemplateRef: &ref})
		}
		return c
	}
	cases := []struct {
		name   string
		class  *v1beta1.ClusterAPINodeClass
		powers clusterapi.Powers
		want   string
	}{
		{"a powered kind", class(), powers, v1beta1.ClusterAPIStandbySupported},
		{"no power known", class(), clusterapi.Powers{}, v1beta1.ClusterAPIStandbyUnsupported},
		{"a power of the template's kind, not the machine's", class(), clusterapi.Powers{schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}: unusedPower{}}, v1beta1.ClusterAPIStandbyUnsupported},
		{"an instance type of the same kind", class("Metal3MachineTemplate"), powers, v1beta1.ClusterAPIStandbySupported},
		{"an instance type of another kind", class("VSphereMachineTemplate"), powers, v1beta1.ClusterAPIStandbyUnsupported},
	}
	for _, c := range cases {
		if got := standbyOf(c.class, c.powers); got != c.want {
			t.Errorf("%s: standby %q; want %q", c.name, got, c.want)
		}
	}
	// A type naming the class's own template adds nothing to check.
	if n := len(templatesOf(class("Metal3MachineTemplate", "VSphereMachineTemplate"))); n != 3 {
		t.Errorf("templatesOf lists %d templates; want 3: the bootstrap one, the class's and the VSphere type's", n)
	}
}
