package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/scheduling/verifier"
)

// This file hands a result to the independent verifier (package verifier). It reads the
// result as provisioning would act on it — a launch becomes a node of one of its
// instance types in one of its zones — and uses nothing of the simulation's code.

// verify reports every violation found in a result.
func verify(t testing.TB, in Input, r Result) {
	t.Helper()
	verifyWithStorage(t, in, r, verifier.Storage{})
}

// verifyWithStorage reports every violation found in a result, the pods' volumes read
// from the storage objects by the verifier itself.
func verifyWithStorage(t testing.TB, in Input, r Result, storage verifier.Storage) {
	t.Helper()
	for _, v := range violationsWithStorage(t, in, r, storage) {
		t.Error(v)
	}
}

// violations checks the result's shape, then replays it under every variant: variant k
// makes launch i a node of its type k (modulo their number) in its offering i+k (modulo
// theirs), so that the types a launch falls back to and the zones it leaves open are
// all replayed.
func violations(t testing.TB, in Input, r Result) []string {
	t.Helper()
	return violationsWithStorage(t, in, r, verifier.Storage{})
}

func violationsWithStorage(t testing.TB, in Input, r Result, storage verifier.Storage) []string {
	t.Helper()
	found := shapeViolations(in, r)
	if len(found) > 0 {
		return found
	}
	variants := 1
	for _, l := range r.Launches {
		variants = max(variants, len(l.InstanceTypes))
	}
	for k := range variants {
		c, errs := verifierCase(in, r, k)
		c.Storage = storage
		found = append(found, errs...)
		for _, v := range verifier.Check(c) {
			found = append(found, fmt.Sprintf("variant %d: %s", k, v))
		}
	}
	return found
}

// shapeViolations checks that every pod is in the result once, that the order lists the
// placed pods, and that each launch's requests add up its pods'.
func shapeViolations(in Input, r Result) []string {
	var found []string
	seen := map[*corev1.Pod]int{}
	placed := 0
	count := func(pod *corev1.Pod, isPlaced bool) {
		seen[pod]++
		if isPlaced {
			placed++
		}
	}
	for pod := range r.Existing {
		count(pod, true)
	}
	for pod := range r.InFlight {
		count(pod, true)
	}
	for _, s := range r.Starts {
		for _, pod := range s.Pods {
			count(pod, true)
		}
	}
	for i, l := range r.Launches {
		for _, pod := range l.Pods {
			count(pod, true)
		}
		sum := requestsOf(l.Pods)
		if !quota.Equals(quota.RemoveZeros(sum), quota.RemoveZeros(l.Requests)) {
			found = append(found, fmt.Sprintf("launch %d: requests %v, its pods add up to %v", i, l.Requests, sum))
		}
	}
	for _, u := range r.Unschedulable {
		count(u.Pod, false)
	}
	found = append(found, floorViolations(in, r)...)
	for _, pod := range in.Pods {
		if seen[pod] != 1 {
			found = append(found, fmt.Sprintf("pod %s is in the result %d times", pod.Name, seen[pod]))
		}
	}
	if len(seen) != len(in.Pods) {
		found = append(found, fmt.Sprintf("the result has %d pods, the input %d", len(seen), len(in.Pods)))
	}
	if len(r.Order) != placed {
		found = append(found, fmt.Sprintf("the order lists %d pods, %d are placed", len(r.Order), placed))
	}
	return found
}

// requestsOf adds up what pods ask of a node, as kube-scheduler counts it, and their number.
func requestsOf(pods []*corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, p := range pods {
		sum = quota.Add(sum, resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
	}
	sum[corev1.ResourcePods] = *resource.NewQuantity(int64(len(pods)), resource.DecimalSI)
	return sum
}

// verifierCase is the cluster the result makes: the nodes, the claims and the launches
// as nodes, and the placements in the result's order.
func verifierCase(in Input, r Result, variant int) (verifier.Case, []string) {
	var c verifier.Case
	var errs []string
	c.DaemonSets = in.DaemonSets
	for _, n := range in.Nodes {
		c.Nodes = append(c.Nodes, verifier.Node{Node: n.Node, Pods: n.Pods})
	}
	standby := map[string]bool{}
	for _, cl := range in.Claims {
		standby[cl.Claim.Name] = cl.Standby
		labels := map[string]string{corev1.LabelHostname: cl.Claim.Name}
		for k, v := range cl.Labels {
			labels[k] = v
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: cl.Claim.Name, Labels: labels},
			Spec:       corev1.NodeSpec{Taints: cl.Taints},
			Status:     corev1.NodeStatus{Allocatable: cl.Allocatable},
		}
		// A claim's node that runs no DaemonSet pod yet will run them once it joins.
		c.Nodes = append(c.Nodes, verifier.Node{Node: node, Pods: cl.Pods, AwaitsDaemonSets: !slices.ContainsFunc(cl.Pods, podutil.OwnedByDaemonSet), AttachLimits: cl.AttachLimits})
	}
	nodeOf := map[*corev1.Pod]string{}
	for pod, name := range r.Existing {
		nodeOf[pod] = name
	}
	for pod, name := range r.InFlight {
		nodeOf[pod] = name
		if standby[name] {
			errs = append(errs, fmt.Sprintf("pod %s placed in flight on standby claim %s", pod.Name, name))
		}
	}
	for _, s := range r.Starts {
		if !standby[s.Claim] {
			errs = append(errs, fmt.Sprintf("start of %s, which is not a standby claim", s.Claim))
		}
		for _, pod := range s.Pods {
			nodeOf[pod] = s.Claim
		}
	}
	for i, l := range r.Launches {
		n, err := launchNode(in, l, i, variant)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		c.Nodes = append(c.Nodes, n)
		for _, pod := range l.Pods {
			nodeOf[pod] = n.Node.Name
		}
	}
	for _, pod := range r.Order {
		c.Placements = append(c.Placements, verifier.Placement{Pod: pod, Node: nodeOf[pod]})
	}
	for _, p := range in.Pools {
		l := verifier.Limit{Pool: p.Pool.Name, Nodes: p.NodesLeft}
		for name, left := range p.Left {
			if l.Resources == nil {
				l.Resources = corev1.ResourceList{}
			}
			if name == corev1.ResourceCPU {
				l.Resources[name] = *resource.NewMilliQuantity(left, resource.DecimalSI)
			} else {
				l.Resources[name] = *resource.NewQuantity(left, resource.DecimalSI)
			}
		}
		c.Limits = append(c.Limits, l)
	}
	return c, errs
}

// launchNode is the node launch i becomes under variant: its instance type variant
// (modulo their number), bought as its offering i+variant (modulo theirs; the cheapest
// under variant 0) among those its zones and capacity types allow.
func launchNode(in Input, l Launch, i, variant int) (verifier.Node, error) {
	pool := -1
	for p := range in.Pools {
		if in.Pools[p].Pool.Name == l.Pool {
			pool = p
		}
	}
	if pool < 0 || len(l.InstanceTypes) == 0 {
		return verifier.Node{}, fmt.Errorf("launch %d: unknown pool %q, or no instance type", i, l.Pool)
	}
	p := in.Pools[pool]
	name := l.InstanceTypes[variant%len(l.InstanceTypes)]
	var it *cloudprovider.InstanceType
	for _, candidate := range p.InstanceTypes {
		if candidate.Name == name {
			it = candidate
		}
	}
	if it == nil {
		return verifier.Node{}, fmt.Errorf("launch %d: pool %s has no instance type %s", i, l.Pool, name)
	}
	// The node reports what its kubelet, configured by the pool, makes of the type.
	it = it.WithKubelet(p.Pool.Spec.Template.Spec.Kubelet)
	var offers []cloudprovider.Offering
	for _, o := range it.Offerings {
		if o.Available && (len(l.Zones) == 0 || slices.Contains(l.Zones, o.Zone)) && (len(l.CapacityTypes) == 0 || slices.Contains(l.CapacityTypes, o.CapacityType)) {
			offers = append(offers, o)
		}
	}
	if len(offers) == 0 {
		return verifier.Node{}, fmt.Errorf("launch %d: %s has no available offering in zones %v and capacity types %v", i, name, l.Zones, l.CapacityTypes)
	}
	slices.SortStableFunc(offers, func(a, b cloudprovider.Offering) int {
		return cmp.Or(cmp.Compare(a.PricePerHour, b.PricePerHour), cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	offer := offers[0]
	if variant > 0 {
		offer = offers[(i+variant)%len(offers)]
	}
	nodeName := fmt.Sprintf("launch-%d", i)
	labels := it.Labels(offer)
	for k, v := range p.Pool.Spec.Template.Labels {
		labels[k] = string(v)
	}
	labels[v1beta1.LabelNodePool] = p.Pool.Name
	labels[corev1.LabelHostname] = nodeName
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: labels}, Status: corev1.NodeStatus{Allocatable: it.Allocatable()}}
	for _, taint := range p.Pool.Spec.Template.Spec.Taints {
		node.Spec.Taints = append(node.Spec.Taints, taint.Core())
	}
	// The node is one the pool may make: its labels meet the pool's requirements.
	if requirements := v1beta1.CoreRequirements(p.Pool.Spec.Template.Spec.Requirements); len(requirements) > 0 {
		selector := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: requirements}}}
		if ok, err := corev1helpers.MatchNodeSelectorTerms(node, selector); err != nil || !ok {
			return verifier.Node{}, fmt.Errorf("launch %d: a %s in %s %s does not meet pool %s's requirements %v (%v)", i, name, offer.Zone, offer.CapacityType, p.Pool.Name, requirements, err)
		}
	}
	return verifier.Node{Node: node, AwaitsDaemonSets: true, Pool: p.Pool.Name, Capacity: it.Capacity, AttachLimits: it.AttachLimits}, nil
}

// floorViolations finds the launches whose instance types have fewer distinct values of
// a key than a minValues requirement of their pool asks for, reading each type's value
// from the labels its nodes carry.
func floorViolations(in Input, r Result) []string {
	var found []string
	for i, l := range r.Launches {
		for _, p := range in.Pools {
			if p.Pool.Name != l.Pool {
				continue
			}
			for _, req := range p.Pool.Spec.Template.Spec.Requirements {
				if req.MinValues == nil {
					continue
				}
				values := map[string]bool{}
				for _, it := range p.InstanceTypes {
					if slices.Contains(l.InstanceTypes, it.Name) && len(it.Offerings) > 0 {
						if v, ok := it.Labels(it.Offerings[0])[req.Key]; ok {
							values[v] = true
						}
					}
				}
				if len(values) < int(*req.MinValues) {
					found = append(found, fmt.Sprintf("launch %d: types %v have %d values of %s, pool %s asks for at least %d", i, l.InstanceTypes, len(values), req.Key, p.Pool.Name, *req.MinValues))
				}
			}
		}
	}
	return found
}
