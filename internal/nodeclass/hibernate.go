package nodeclass

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Hibernates reports whether a node class asks its standby nodes to hibernate rather
// than stop. A class of another kind, or none, does not.
func Hibernates(class client.Object) bool {
	switch c := class.(type) {
	case *v1beta1.FakeNodeClass:
		return c.Spec.Hibernate
	case *v1beta1.EC2NodeClass:
		return c.Spec.Hibernate
	default:
		return false
	}
}
