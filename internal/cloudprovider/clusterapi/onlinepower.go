package clusterapi

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SimMachineKind is the simulator's infrastructure machine, which Stratos powers off and
// on through spec.online.
var SimMachineKind = schema.GroupKind{Group: "sim.stratos.sh", Kind: "SimMachine"}

// DefaultPowers are the power interfaces Stratos knows: the online switch of the
// simulator's SimMachine. Metal3's BareMetalHost has the same shape on the host rather
// than on the Metal3Machine; docs/clusterapi.md designs it.
func DefaultPowers() Powers {
	return Powers{SimMachineKind: OnlinePower{}}
}

// CanPower reports whether Stratos can power machines of an infrastructure machine kind
// off and on, which a warm pool needs.
func (p *Provider) CanPower(infrastructureMachine schema.GroupKind) bool {
	_, ok := p.powers[infrastructureMachine]
	return ok
}

// OnlinePower powers a machine whose spec.online (a bool) is the wish and whose
// status.poweredOn (a bool) the fact, as Metal3's BareMetalHost does.
type OnlinePower struct{}

// PowerOff sets spec.online to false.
func (OnlinePower) PowerOff(ctx context.Context, c client.Client, machine *unstructured.Unstructured) error {
	return setOnline(ctx, c, machine, false)
}

// PowerOn sets spec.online to true.
func (OnlinePower) PowerOn(ctx context.Context, c client.Client, machine *unstructured.Unstructured) error {
	return setOnline(ctx, c, machine, true)
}

// State compares the wish with the fact. A machine that has not reported its power yet
// is powering towards its wish; an unset wish is on, as the simulator's CRD defaults it.
func (OnlinePower) State(_ context.Context, _ client.Client, machine *unstructured.Unstructured) (PowerState, error) {
	return onlineState(machine)
}

// onlineState is the power state of a machine with spec.online and status.poweredOn.
func onlineState(machine *unstructured.Unstructured) (PowerState, error) {
	online, set, err := unstructured.NestedBool(machine.Object, "spec", "online")
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", machine.GetKind(), machine.GetName(), err)
	}
	if !set {
		online = true
	}
	poweredOn, _, err := unstructured.NestedBool(machine.Object, "status", "poweredOn")
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", machine.GetKind(), machine.GetName(), err)
	}
	switch {
	case online && poweredOn:
		return PoweredOn, nil
	case online:
		return PoweringOn, nil
	case poweredOn:
		return PoweringOff, nil
	default:
		return PoweredOff, nil
	}
}

// setOnline sets spec.online with a merge patch, which touches no other field, doing
// nothing when it already is as asked.
func setOnline(ctx context.Context, c client.Client, machine *unstructured.Unstructured, online bool) error {
	if current, set, _ := unstructured.NestedBool(machine.Object, "spec", "online"); set && current == online {
		return nil
	}
	patch := fmt.Appendf(nil, `{"spec":{"online":%t}}`, online)
	return c.Patch(ctx, machine.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
}
