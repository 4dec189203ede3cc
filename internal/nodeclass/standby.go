package nodeclass

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ReasonStandbyUnsupported is why a pool keeps no warm pool: its node class's machines
// cannot be powered off and on.
const ReasonStandbyUnsupported = "StandbyUnsupported"

// CanStandBy reports whether the nodes of a node class can stand by (be stopped, and
// started again on demand), and if not, a reason and a message that say why. Clouds
// stop instances; Cluster API has no stopped state, so a ClusterAPINodeClass can only
// where Stratos knows how to power its infrastructure's machines off and on, which its
// status.standby says. A class whose status says nothing yet is not refused: it has not
// been resolved, and nothing launches with it until it is (Ready).
func CanStandBy(obj client.Object) (bool, string, string) {
	class, ok := obj.(*v1beta1.ClusterAPINodeClass)
	if !ok || class.Status.Standby != v1beta1.ClusterAPIStandbyUnsupported {
		return true, "", ""
	}
	return false, ReasonStandbyUnsupported, fmt.Sprintf(
		"Stratos cannot power the infrastructure machines of ClusterAPINodeClass %s (%s) off and on, so its pools keep no warm pool",
		class.Name, strings.Join(InfrastructureMachineKinds(class), ", "))
}

// InfrastructureMachineKinds names, as kind.group, the kinds of infrastructure machine a
// ClusterAPINodeClass's templates make (the class's and its instance types' own), each
// once, in order.
func InfrastructureMachineKinds(class *v1beta1.ClusterAPINodeClass) []string {
	kinds := []string{machineKindOf(class.Spec.InfrastructureTemplateRef)}
	for _, t := range class.Spec.InstanceTypes {
		if t.InfrastructureTemplateRef != nil && !slices.Contains(kinds, machineKindOf(*t.InfrastructureTemplateRef)) {
			kinds = append(kinds, machineKindOf(*t.InfrastructureTemplateRef))
		}
	}
	return kinds
}

func machineKindOf(ref v1beta1.ClusterAPITemplateReference) string {
	return InfrastructureMachineKind(ref.Kind) + "." + ref.APIGroup
}

// InfrastructureMachineKind is the kind of the machines an infrastructure machine
// template makes: the template's kind without its Template suffix, as CAPI's contract
// names them (a Metal3MachineTemplate makes Metal3Machines).
func InfrastructureMachineKind(templateKind string) string {
	return strings.TrimSuffix(templateKind, "Template")
}
