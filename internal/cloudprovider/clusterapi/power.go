package clusterapi

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PowerState is what a power interface knows of a machine's power.
type PowerState string

const (
	// PoweredOn: the machine runs.
	PoweredOn PowerState = "On"
	// PoweredOff: the machine is off; its disks (and its Node object) stay.
	PoweredOff PowerState = "Off"
	// PoweringOn and PoweringOff: asked for, not reached yet.
	PoweringOn  PowerState = "PoweringOn"
	PoweringOff PowerState = "PoweringOff"
)

// Power switches the machines of one infrastructure kind off and on, which a warm pool
// needs and Cluster API does not offer: a Machine is either provisioned or deleted. An
// infrastructure provider whose machines can be powered off (Metal3's BareMetalHost
// spec.online, the simulator's SimMachine spec.online) gets an implementation; a pool on
// an infrastructure without one keeps no warm pool and says so.
//
// Each call gets the infrastructure machine the Machine refers to, as Stratos created
// it from the template, and a client to read and write what it needs; every call is
// safe to repeat.
type Power interface {
	// PowerOff asks for the machine to be switched off, gracefully.
	PowerOff(ctx context.Context, c client.Client, infraMachine *unstructured.Unstructured) error
	// PowerOn asks for the machine to be switched on.
	PowerOn(ctx context.Context, c client.Client, infraMachine *unstructured.Unstructured) error
	// State reports the machine's power now.
	State(ctx context.Context, c client.Client, infraMachine *unstructured.Unstructured) (PowerState, error)
}

// Powers are the power interfaces Stratos knows, by the infrastructure machine's group
// and kind.
type Powers map[schema.GroupKind]Power
