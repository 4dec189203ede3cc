package provisioning

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// reservers bounds the pod writes of reservations at once, so that they leave the
// client's rate to the claim writes of the decisions that follow.
const reservers = 8

// placements collects the pods a decision placed on each claim. Writers add to it
// concurrently.
type placements struct {
	mu      sync.Mutex
	byClaim map[string][]*corev1.Pod
}

// add records pods placed on a claim, and logs them at debug level: which pods went
// where is what explains a decision afterwards.
func (pl *placements) add(ctx context.Context, how, claim string, pods []*corev1.Pod) {
	names := make([]string, len(pods))
	for i, pod := range pods {
		names[i] = pod.Name
	}
	sort.Strings(names)
	log.FromContext(ctx).V(1).Info("Nominated", "how", how, "nodeclaim", claim, "pods", strings.Join(names, ","))
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.byClaim == nil {
		pl.byClaim = map[string][]*corev1.Pod{}
	}
	pl.byClaim[claim] = append(pl.byClaim[claim], pods...)
}

func (pl *placements) all() map[string][]*corev1.Pod {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.byClaim
}

// reserve gives each pod placed on a claim a toleration of the claim's reservation
// taint. Kube-scheduler knows nothing of provisioning's plan: without the reservation,
// the first Nodes to open take whatever pods wait, the emptiest first, and pods that fit
// only their own claim (another architecture, a large request, hostname anti-affinity)
// are left over for a second wave of launches. The NodeClaim lifecycle controller opens
// a running claim's Node with the taint `stratos.sh/reserved=<claim>:NoSchedule` while
// pods wait nominated to it, and lifts it once they are bound, BindGrace at most; the
// pods tolerate it, no others do. Kubernetes lets a pod's tolerations grow, never
// shrink, so a pod planned again keeps the old ones, which match no Node for long.
//
// Only the claims marked reserved (Cluster.Reserve; see reservationMatters for which)
// get their pods the toleration: the lifecycle controller opens only their Nodes with
// the taint.
//
// The writes run after the claims are written and in the background: a Node opens 13 s
// after a start at the soonest, and the next decision should not wait for them. A pod
// whose write fails (a webhook that refuses it, say) only loses its reservation: it
// waits for the taint to lift.
func (p *Provisioner) reserve(ctx context.Context, byClaim map[string][]*corev1.Pod) {
	type write struct {
		pod        *corev1.Pod
		toleration corev1.Toleration
	}
	var writes []write
	for claim, pods := range byClaim {
		if !p.State.Reserved(claim) {
			continue
		}
		toleration := ReservationToleration(claim)
		for _, pod := range pods {
			if !slices.Contains(pod.Spec.Tolerations, toleration) {
				writes = append(writes, write{pod: pod, toleration: toleration})
			}
		}
	}
	workqueue.ParallelizeUntil(ctx, reservers, len(writes), func(i int) {
		w := writes[i]
		updated, patch := Reservation(w.pod, w.toleration.Value)
		if err := p.Client.Patch(ctx, updated, patch); err != nil {
			log.FromContext(ctx).V(1).Info("Could not reserve room for a pod on its claim", "pod", client.ObjectKeyFromObject(w.pod), "nodeclaim", w.toleration.Value, "error", err.Error())
		}
	})
}

// ReservationToleration is the toleration of claim's reservation taint.
func ReservationToleration(claim string) corev1.Toleration {
	return corev1.Toleration{Key: v1beta1.TaintReservedKey, Operator: corev1.TolerationOpEqual, Value: claim, Effect: corev1.TaintEffectNoSchedule}
}

// Reservation is the one change Stratos makes to a pod: pod with the toleration of
// claim's reservation added, and the patch that writes it. It is all the chart's
// admission policy (templates/podpatchpolicy.yaml) lets the operator do to a pod, and
// its test patches pods with it.
func Reservation(pod *corev1.Pod, claim string) (*corev1.Pod, client.Patch) {
	updated := pod.DeepCopy()
	updated.Spec.Tolerations = append(updated.Spec.Tolerations, ReservationToleration(claim))
	// No optimistic lock: kube-scheduler rewrites the pod's status all along, and
	// tolerations only grow, so the list written is the one to keep.
	return updated, client.MergeFrom(pod)
}
