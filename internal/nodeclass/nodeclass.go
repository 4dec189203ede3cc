// Package nodeclass resolves a NodeClassReference to the node class object it names.
package nodeclass

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// newObject returns an empty object of a node class kind.
func newObject(kind string) (client.Object, error) {
	switch kind {
	case "FakeNodeClass":
		return &v1alpha1.FakeNodeClass{}, nil
	case "AWSNodeClass":
		return &v1alpha1.AWSNodeClass{}, nil
	default:
		return nil, fmt.Errorf("unknown node class kind %q", kind)
	}
}

// Get returns the node class ref names. A missing class is a NotFound error from the
// API, which apierrors.IsNotFound recognises.
func Get(ctx context.Context, c client.Reader, ref v1alpha1.NodeClassReference) (client.Object, error) {
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
	return []client.Object{&v1alpha1.FakeNodeClass{}, &v1alpha1.AWSNodeClass{}}
}
