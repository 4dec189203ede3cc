package stack

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// CAPIOnFake launches the instances of a ClusterAPINodeClass in the fake cloud, from its
// whole catalogue, for tests of what pools and disruption do with such a class (its
// standby support), not of the Cluster API provider. Set it as OperatorOptions.WrapCloud.
func CAPIOnFake(api cloudprovider.API) cloudprovider.API { return capiOnFake{api} }

type capiOnFake struct{ cloudprovider.API }

func (c capiOnFake) InstanceTypes(ctx context.Context, class client.Object) ([]*cloudprovider.InstanceType, error) {
	if _, ok := class.(*v1beta1.ClusterAPINodeClass); ok {
		class = nil
	}
	return c.API.InstanceTypes(ctx, class)
}

func (c capiOnFake) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	if _, ok := req.NodeClass.(*v1beta1.ClusterAPINodeClass); ok {
		copied := *req
		copied.NodeClass = nil
		req = &copied
	}
	return c.API.Create(ctx, req)
}

// CAPIClass creates a ClusterAPINodeClass of a Metal3 infrastructure and writes the
// status its controller would: Ready for its generation, with standby as given.
func (f *Fixture) CAPIClass(name, standby string) *v1beta1.ClusterAPINodeClass {
	f.T.Helper()
	class := &v1beta1.ClusterAPINodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.ClusterAPINodeClassSpec{
		Cluster:                   v1beta1.ClusterAPIClusterReference{Namespace: "default", Name: "metal"},
		BootstrapTemplateRef:      v1beta1.ClusterAPITemplateReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "workers"},
		InfrastructureTemplateRef: v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "workers"},
		Version:                   "v1.37.2",
		InstanceTypes: []v1beta1.ClusterAPIInstanceType{{Name: "m5.large", Zones: []string{"zone-a"}, PricePerHour: "0.1",
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}}},
	}}
	f.Create(class)
	f.SetCAPIStandby(class, standby)
	return class
}

// SetCAPIStandby writes a ClusterAPINodeClass's status as its controller would.
func (f *Fixture) SetCAPIStandby(class *v1beta1.ClusterAPINodeClass, standby string) {
	f.T.Helper()
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(class), class); err != nil {
		f.T.Fatal(err)
	}
	base := class.DeepCopy()
	class.Status.ObservedGeneration, class.Status.Standby = class.Generation, standby
	meta.SetStatusCondition(&class.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: "Resolved", Message: "resolved", ObservedGeneration: class.Generation})
	if err := f.Env.Client.Status().Patch(f.Ctx, class, client.MergeFrom(base)); err != nil {
		f.T.Fatal(err)
	}
}
