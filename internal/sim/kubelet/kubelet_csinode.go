package kubelet

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/volumes"
)

// The CSINode the kubelet publishes for its Node, with the attach limits of its CSI
// drivers, once the Node is Ready (when a real node's CSI node plugin has registered).
// +kubebuilder:rbac:groups=storage.k8s.io,resources=csinodes,verbs=create

// publishCSINode creates the Node's CSINode with one driver per attach limit of its
// instance type, owned by the Node so that it goes with it, as the kubelet does. A
// CSINode that exists is left as it is.
func (k *Kubelet) publishCSINode(ctx context.Context, v physics.NodeView, nodeUID types.UID) error {
	limits := v.InstanceType.AttachLimits
	if len(limits) == 0 {
		return nil
	}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{
		Name:            v.NodeName,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: v.NodeName, UID: nodeUID}},
	}}
	for _, driver := range slices.Sorted(maps.Keys(limits)) {
		csiNode.Spec.Drivers = append(csiNode.Spec.Drivers, storagev1.CSINodeDriver{
			Name:         driver,
			NodeID:       v.InstanceID,
			TopologyKeys: []string{volumes.EBSZoneLabel},
			Allocatable:  &storagev1.VolumeNodeResources{Count: ptr.To(int32(limits[driver]))},
		})
	}
	if err := k.client.Create(ctx, csiNode); !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// withDriverLabels adds to a Node's registration labels those its CSI node plugin
// would add: the EBS driver's zone label, which zonal volumes made by older releases of
// the driver name in their node affinity.
func withDriverLabels(labels map[string]string, t *cloudprovider.InstanceType) map[string]string {
	if _, ok := t.AttachLimits[volumes.EBSDriver]; !ok || labels[corev1.LabelTopologyZone] == "" {
		return labels
	}
	out := maps.Clone(labels)
	out[volumes.EBSZoneLabel] = labels[corev1.LabelTopologyZone]
	return out
}
