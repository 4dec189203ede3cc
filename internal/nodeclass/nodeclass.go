// Package nodeclass resolves a NodeClassReference to the node class object it names, and
// says whether nodes can launch with it.
package nodeclass

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// newObject returns an empty object of a node class kind.
func newObject(kind string) (client.Object, error) {
	switch kind {
	case "FakeNodeClass":
		return &v1beta1.FakeNodeClass{}, nil
	case "EC2NodeClass":
		return &v1beta1.EC2NodeClass{}, nil
	case "ClusterAPINodeClass":
		return &v1beta1.ClusterAPINodeClass{}, nil
	default:
		return nil, fmt.Errorf("unknown node class kind %q", kind)
	}
}

// Get returns the node class ref names. A missing class is a NotFound error from the
// API, which apierrors.IsNotFound recognises.
func Get(ctx context.Context, c client.Reader, ref v1beta1.NodeClassReference) (client.Object, error) {
	obj, err := newObject(ref.Kind)
	if err != nil {
		return nil, err
	}
	if err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Objects returns one empty object of every node class kind, for watches.
func Objects() []client.Object {
	return []client.Object{&v1beta1.FakeNodeClass{}, &v1beta1.EC2NodeClass{}, &v1beta1.ClusterAPINodeClass{}}
}

// Reasons Ready gives for a node class that is not ready, besides the reason of its own
// Ready condition.
const (
	// ReasonNotResolved: the class has not been resolved since its spec last changed.
	ReasonNotResolved = "NodeClassNotResolved"
	// ReasonDeleting: the class is being deleted; no node launches with it any more.
	ReasonDeleting = "NodeClassDeleting"
)

// Ready reports whether nodes can launch with a node class now, and if not, a reason
// and a message that say why. A FakeNodeClass has nothing to resolve and is always
// ready; an EC2NodeClass or a ClusterAPINodeClass is once its Ready condition is True
// for its current spec.
func Ready(obj client.Object) (bool, string, string) {
	var kind string
	var conditions []metav1.Condition
	switch class := obj.(type) {
	case *v1beta1.EC2NodeClass:
		kind, conditions = "EC2NodeClass", class.Status.Conditions
	case *v1beta1.ClusterAPINodeClass:
		kind, conditions = "ClusterAPINodeClass", class.Status.Conditions
	default:
		return true, "", ""
	}
	name := obj.GetName()
	if !obj.GetDeletionTimestamp().IsZero() {
		return false, ReasonDeleting, fmt.Sprintf("%s %s is being deleted", kind, name)
	}
	ready := meta.FindStatusCondition(conditions, v1beta1.ConditionReady)
	switch {
	case ready == nil || ready.ObservedGeneration < obj.GetGeneration():
		return false, ReasonNotResolved, fmt.Sprintf("%s %s has not been resolved since its spec last changed", kind, name)
	case ready.Status != metav1.ConditionTrue:
		return false, ready.Reason, fmt.Sprintf("%s %s is not ready: %s", kind, name, ready.Message)
	}
	return true, "", ""
}

// Images are the machine images a node class resolved to, the images its nodes should
// run; nil when the class resolves none (a FakeNodeClass) or has not resolved any yet.
func Images(obj client.Object) []string {
	class, ok := obj.(*v1beta1.EC2NodeClass)
	if !ok {
		return nil
	}
	var ids []string
	for _, ami := range class.Status.AMIs {
		ids = append(ids, ami.ID)
	}
	return ids
}

// InstanceProfile is the instance profile an EC2NodeClass's nodes launch with now, as
// its status says; "" for other classes or before it resolved one.
func InstanceProfile(obj client.Object) string {
	if class, ok := obj.(*v1beta1.EC2NodeClass); ok {
		return class.Status.InstanceProfile
	}
	return ""
}

// EncryptionKeys are the KMS keys an EC2NodeClass's volumes are encrypted with, as its
// block device mappings name them; none for other classes, or for volumes EBS encrypts
// with the account's default key.
func EncryptionKeys(obj client.Object) []string {
	class, ok := obj.(*v1beta1.EC2NodeClass)
	if !ok {
		return nil
	}
	var keys []string
	for _, m := range class.Spec.BlockDeviceMappings {
		if key := m.EBS.KMSKeyID; key != "" && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	return keys
}
