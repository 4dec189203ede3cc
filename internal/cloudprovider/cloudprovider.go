// Package cloudprovider is the boundary between Stratos and a cloud. Controllers use
// CloudProvider, one instance per call; a cloud implements API, whose calls take many
// instances at once as EC2's do. New joins the two: concurrent calls of the same kind are
// batched into one cloud call, and every cloud call is counted and timed.
package cloudprovider

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CloudProvider is what the NodeClaim lifecycle controller, the only caller for
// instances, uses. Every call is safe to repeat.
type CloudProvider interface {
	// Name is the provider's name, such as fake or aws.
	Name() string
	// Create launches an instance, or returns the one an earlier call with the same
	// ClientToken launched.
	Create(ctx context.Context, req *CreateRequest) (*Instance, error)
	// Start starts a stopped instance; starting a running one does nothing.
	Start(ctx context.Context, instanceID string) error
	// Stop stops a running instance; stopping a stopped one does nothing. With hibernate,
	// the instance hibernates: its memory goes to its root volume and the next start
	// resumes it. An instance not launched for hibernation refuses with ErrUnsupported.
	Stop(ctx context.Context, instanceID string, hibernate bool) error
	// ForceStop stops a running instance, or one whose stop does not end, without
	// waiting for its operating system to shut down, as EC2's StopInstances with Force;
	// stopping a stopped one does nothing.
	ForceStop(ctx context.Context, instanceID string) error
	// Terminate terminates an instance; terminating a terminated one does nothing.
	Terminate(ctx context.Context, instanceID string) error
	// Get describes an instance; ErrNotFound when the cloud has forgotten it, and
	// ErrNotOwned when it exists but does not carry the cluster's ownership tag, unless
	// it is terminating or terminated: such an instance is gone whoever owns it.
	Get(ctx context.Context, instanceID string) (*Instance, error)
	// List returns the instances that carry every given tag and are not terminated.
	List(ctx context.Context, tags map[string]string) ([]*Instance, error)
	// InstanceTypes returns the types a node class may launch, with capacity, prices and zones.
	InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*InstanceType, error)
}

// API is what a cloud implements. The batch calls return a whole-call error (throttling,
// an outage) or per-instance errors keyed by ID; an ID absent from the map succeeded.
// An instance that does not carry the cluster's ownership tag is not acted on: the
// batch calls answer it with a NotOwned error.
type API interface {
	Name() string
	Create(ctx context.Context, req *CreateRequest) (*Instance, error)
	StartInstances(ctx context.Context, ids []string) (map[string]error, error)
	// StopInstances stops the instances, hibernating them if hibernate is set.
	StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error)
	// ForceStopInstances stops the running and the stopping instances without waiting
	// for their operating systems: a stop that hangs ends.
	ForceStopInstances(ctx context.Context, ids []string) (map[string]error, error)
	TerminateInstances(ctx context.Context, ids []string) (map[string]error, error)
	// DescribeInstances returns the instances the cloud knows; an ID it does not know is
	// absent from the map, and one without the cluster's ownership tag has NotOwned set.
	DescribeInstances(ctx context.Context, ids []string) (map[string]*Instance, error)
	ListInstances(ctx context.Context, tags map[string]string) ([]*Instance, error)
	InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*InstanceType, error)
}

// Operation names, used in errors, metrics and fault injection.
const (
	OpCreate        = "Create"
	OpStart         = "Start"
	OpStop          = "Stop"
	OpTerminate     = "Terminate"
	OpGet           = "Get"
	OpList          = "List"
	OpInstanceTypes = "InstanceTypes"
)
