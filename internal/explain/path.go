package explain

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/podstartup"
)

// Path is how a pod got, or is getting, its node.
type Path string

const (
	// PathStandby: a node started from standby for the pod (podstartup's standby).
	PathStandby Path = Path(podstartup.PathStandby)
	// PathCold: a node launched for the pod (podstartup's cold).
	PathCold Path = Path(podstartup.PathCold)
	// PathExisting: a node that was serving already when the pod was created.
	PathExisting Path = Path(podstartup.PathExisting)
	// PathInFlight: a pending pod placed on a claim launched or started before the pod
	// was created, for other pods, that is not running yet.
	PathInFlight Path = "inflight"
	// PathNotStratos: the pod's node is not one of Stratos's.
	PathNotStratos Path = "not-stratos"
	// PathUnknown: the pod's Node is gone, and with it what tells the path.
	PathUnknown Path = "unknown"
)

// boundPath is the path that served a bound pod, read from the same timestamps the
// stratos_pod_startup_duration_seconds metric reads (podstartup.Classify), so that the
// explanation and the metric never disagree: the Node's creation and the last accepted
// start of its claim (the Started condition's time).
func boundPath(pod *corev1.Pod, node *corev1.Node, claim *v1beta1.NodeClaim) Path {
	switch {
	case node == nil:
		return PathUnknown
	case claim == nil:
		return PathNotStratos
	}
	return Path(podstartup.Classify(pod.CreationTimestamp.Time, podstartup.Served{NodeCreated: node.CreationTimestamp.Time, LastStart: lastStart(claim)}))
}

// pendingPath is how the claim a pending pod was placed on is to serve it: a start from
// standby (the claim stood by and is asked to run, or started after the pod was
// created), a launch for it (the claim was made after the pod was, to the second, as
// the API server keeps times), or a claim on its way already for other pods.
func pendingPath(pod *corev1.Pod, claim *v1beta1.NodeClaim) Path {
	created := pod.CreationTimestamp.Time
	if started := lastStart(claim); !started.IsZero() && !started.Before(created) {
		return PathStandby
	}
	standing := claim.Status.Phase == v1beta1.PhaseStandby || claim.Status.Phase == v1beta1.PhaseStarting
	if standing && claim.Spec.DesiredState == v1beta1.DesiredRunning {
		return PathStandby
	}
	if !claim.CreationTimestamp.Time.Before(created) {
		return PathCold
	}
	return PathInFlight
}

// lastStart is when the claim's instance last started from standby, zero if never.
func lastStart(claim *v1beta1.NodeClaim) time.Time {
	started := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionStarted)
	if started == nil || started.Status != metav1.ConditionTrue {
		return time.Time{}
	}
	return started.LastTransitionTime.Time
}
