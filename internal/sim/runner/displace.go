package runner

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodeutil "k8s.io/component-helpers/node/util"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// displacement is a Node whose workload pods had to move, as the step that caused it
// recorded it: given notice of its instance's end, or made unhealthy.
type displacement struct {
	instanceID, node string
	// at is when the notice was given or the kubelet began to fail, in wall time;
	// endsAt when the instance is taken away, zero if it is not.
	at, endsAt time.Time
	// pods are the workload pods on the Node then, by podKey.
	pods []string
	// repair: made unhealthy, rather than given notice.
	repair bool
}

// target is a running instance whose Node holds workload pods.
type target struct {
	instanceID, node string
	pods             []string
}

// targets lists the running instances whose Nodes hold workload pods (not being deleted
// nor finished), of pool and capacity type when set, leaving out those in skip; ready
// keeps only Nodes whose Ready condition is True. They come sorted by Node name.
func (r *run) targets(ctx context.Context, pool, capacityType string, ready bool, skip map[string]bool) ([]target, error) {
	instances := map[string]cloudprovider.Instance{}
	for _, inst := range r.cloud.Instances() {
		instances[inst.ID] = inst
	}
	nodes := &corev1.NodeList{}
	if err := r.client.List(ctx, nodes); err != nil {
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods); err != nil {
		return nil, err
	}
	byNode := map[string][]string{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Labels[WorkloadLabel] != "" && pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil && !podutil.Finished(pod) {
			byNode[pod.Spec.NodeName] = append(byNode[pod.Spec.NodeName], podKey(pod))
		}
	}
	var found []target
	for i := range nodes.Items {
		node := &nodes.Items[i]
		id := instanceOf(node.Spec.ProviderID)
		inst, known := instances[id]
		switch {
		case !known || skip[id] || inst.State != cloudprovider.StateRunning || len(byNode[node.Name]) == 0:
			continue
		case pool != "" && node.Labels[v1beta1.LabelNodePool] != pool:
			continue
		case capacityType != "" && inst.CapacityType != capacityType:
			continue
		}
		if ready {
			if _, c := nodeutil.GetNodeCondition(&node.Status, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
				continue
			}
		}
		found = append(found, target{instanceID: id, node: node.Name, pods: byNode[node.Name]})
	}
	sort.Slice(found, func(a, b int) bool { return found[a].node < found[b].node })
	return found, nil
}

// interrupt gives the step's first batch of notices and schedules the others.
func (r *run) interrupt(ctx context.Context, in *scenario.Interrupt) error {
	// A source of the step's own, used by its goroutine only: the run's is the kills'.
	rng := rand.New(rand.NewPCG(uint64(r.opts.Scenario.Seed), uint64(len(r.displacementsSoFar()))+1))
	if err := r.interruptBatch(ctx, in, rng); err != nil {
		return err
	}
	if in.Every == nil {
		return nil
	}
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		for batch := 2; batch <= in.BatchesOrDefault(); batch++ {
			if pause(ctx, r.wall(in.Every.Duration)) != nil {
				return
			}
			if err := r.interruptBatch(ctx, in, rng); err != nil {
				r.progress("interrupt batch %d: %v", batch, err)
			}
		}
	}()
	return nil
}

// interruptBatch picks the instances of one batch and has the cloud give them notice.
func (r *run) interruptBatch(ctx context.Context, in *scenario.Interrupt, rng *rand.Rand) error {
	kind := in.KindOrDefault()
	// An instance being taken away already gets no second notice; a rebalance
	// recommendation takes nothing away.
	skip := map[string]bool{}
	for _, d := range r.displacementsSoFar() {
		if !d.endsAt.IsZero() || d.repair {
			skip[d.instanceID] = true
		}
	}
	found, err := r.targets(ctx, in.NodePool, in.CapacityTypeOrDefault(), false, skip)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("no running %s instance holds workload pods%s", orAny(in.CapacityTypeOrDefault()), ofPool(in.NodePool))
	}
	n := len(found)
	switch {
	case in.Count != nil:
		n = min(*in.Count, n)
	case in.Share != nil:
		n = int(math.Ceil(*in.Share * float64(len(found))))
	}
	rng.Shuffle(len(found), func(a, b int) { found[a], found[b] = found[b], found[a] })
	picked := found[:n]
	ids := make([]string, 0, n)
	for _, t := range picked {
		ids = append(ids, t.instanceID)
	}
	at := time.Now()
	var endsAt time.Time
	if kind != scenario.KindRebalance {
		endsAt = at.Add(r.wall(in.NoticeOrDefault()))
	}
	if err := r.cloud.interrupt(kind, ids, in.NoticeOrDefault()); err != nil {
		return err
	}
	for _, t := range picked {
		r.addDisplacement(displacement{instanceID: t.instanceID, node: t.node, at: at, endsAt: endsAt, pods: t.pods})
	}
	r.progress("%s notice to %d instances: %v", kind, len(ids), ids)
	return nil
}

// makeUnhealthy makes the kubelets of Ready Nodes that hold workload pods fail.
func (r *run) makeUnhealthy(ctx context.Context, u *scenario.Unhealthy) error {
	skip := map[string]bool{}
	for _, d := range r.displacementsSoFar() {
		skip[d.instanceID] = true
	}
	found, err := r.targets(ctx, u.NodePool, "", true, skip)
	if err != nil {
		return err
	}
	if len(found) < u.CountOrDefault() {
		return fmt.Errorf("%d Ready Nodes hold workload pods%s, fewer than the %d wanted", len(found), ofPool(u.NodePool), u.CountOrDefault())
	}
	picked := found[:u.CountOrDefault()]
	ids := make([]string, 0, len(picked))
	for _, t := range picked {
		ids = append(ids, t.instanceID)
	}
	at := time.Now()
	if err := r.cloud.makeUnhealthy(ids, physics.Unhealthy{Condition: u.Condition, Silent: u.Silent}); err != nil {
		return err
	}
	for _, t := range picked {
		r.addDisplacement(displacement{instanceID: t.instanceID, node: t.node, at: at, pods: t.pods, repair: true})
	}
	r.progress("made %d Nodes unhealthy: %v", len(ids), ids)
	return nil
}

func (r *run) addDisplacement(d displacement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.displacements = append(r.displacements, d)
}

func (r *run) displacementsSoFar() []displacement {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.displacements)
}

func orAny(capacityType string) string {
	if capacityType == "" {
		return "(any capacity type)"
	}
	return capacityType
}

func ofPool(pool string) string {
	if pool == "" {
		return ""
	}
	return " in pool " + pool
}
