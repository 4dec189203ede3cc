package scenario

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
)

// stratosObjects are the Go types of the stratos.sh objects a scenario may create.
var stratosObjects = map[string]func() any{
	"NodePool":      func() any { return &v1beta1.NodePool{} },
	"NodeClaim":     func() any { return &v1beta1.NodeClaim{} },
	"FakeNodeClass": func() any { return &v1beta1.FakeNodeClass{} },
	"EC2NodeClass":  func() any { return &v1beta1.EC2NodeClass{} },
}

// bufferObjects are the Go types of the autoscaling.x-k8s.io objects a scenario may
// create, Stratos's copy of SIG Autoscaling's API.
var bufferObjects = map[string]func() any{
	"CapacityBuffer": func() any { return &autoscalingv1beta1.CapacityBuffer{} },
}

// checkObject decodes a stratos.sh or autoscaling.x-k8s.io object strictly into its Go type, so that a field the
// API does not have — a NodePool of the shape before v1beta1, with
// spec.template.nodeClassRef or spec.disruption.expireAfter — is refused when the
// scenario is read, naming the field, rather than by the API server minutes into a run;
// so is a CapacityBuffer with a mistyped field. Objects of other groups are the API
// server's to check.
func checkObject(o unstructured.Unstructured) error {
	group, version, _ := strings.Cut(o.GetAPIVersion(), "/")
	var kinds map[string]func() any
	switch group {
	case v1beta1.Group:
		if version != v1beta1.GroupVersion.Version {
			return fmt.Errorf("%s %s: the API is %s; see CHANGELOG.md for the fields that moved", o.GetKind(), o.GetAPIVersion(), v1beta1.GroupVersion)
		}
		kinds = stratosObjects
	case autoscalingv1beta1.Group:
		// Other versions of the group are other implementations' to serve.
		if version != autoscalingv1beta1.GroupVersion.Version {
			return fmt.Errorf("%s %s: Stratos serves %s", o.GetKind(), o.GetAPIVersion(), autoscalingv1beta1.GroupVersion)
		}
		kinds = bufferObjects
	default:
		return nil
	}
	newObject, ok := kinds[o.GetKind()]
	if !ok {
		return fmt.Errorf("kind %s is not one of the %s kinds Stratos serves", o.GetKind(), o.GetAPIVersion())
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, newObject()); err != nil {
		return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}
