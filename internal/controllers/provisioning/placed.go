package provisioning

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// placedPods is the value of a claim's AnnotationPlacedPods once pods are placed on it
// besides those listed already in listed: the names not listed yet are added in name
// order, as long as the value stays within MaxPlacedPodsLength. The annotation is how
// `stratos explain pod` names the claim of a waiting pod that no reservation toleration
// names (a decision that reserves nothing writes no pod), at no write of its own for a
// launch or a start: it goes in the same request.
func placedPods(listed string, pods []*corev1.Pod) string {
	var names []string
	if listed != "" {
		names = strings.Split(listed, ",")
	}
	var added []string
	for _, pod := range pods {
		if name := pod.Namespace + "/" + pod.Name; !slices.Contains(names, name) && !slices.Contains(added, name) {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	length := len(listed)
	for _, name := range added {
		grown := length + len(name)
		if length > 0 {
			grown++ // the comma
		}
		if grown > v1beta1.MaxPlacedPodsLength {
			break // the names that do not fit are left out: explain does not name their claim
		}
		names, length = append(names, name), grown
	}
	return strings.Join(names, ",")
}

// withPlacedPods sets the annotation of claim to list pods, after those listed already.
func withPlacedPods(claim *v1beta1.NodeClaim, pods []*corev1.Pod) {
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[v1beta1.AnnotationPlacedPods] = placedPods(claim.Annotations[v1beta1.AnnotationPlacedPods], pods)
}

// listPlacedInFlight asks for the pods a decision placed on claims already on their way
// to be added to the claims' annotation (see placedWriter), for the claims whose pods
// get no reservation toleration (the toleration names the claim otherwise).
func (p *Provisioner) listPlacedInFlight(claims map[string]*v1beta1.NodeClaim, byClaim map[string][]*corev1.Pod) {
	for name, pods := range byClaim {
		if claim := claims[name]; claim != nil && !p.State.Reserved(name) {
			p.placed.add(claim, pods)
		}
	}
}

// patchPlacedPods is placedWriter's patch: it merges the one annotation, without an
// optimistic lock, as provisioning is the only writer of the list and writes a claim's
// one at a time; its own write counts at once (ObserveWrite). A patch that fails only
// leaves explain without the claim's name.
func (p *Provisioner) patchPlacedPods(ctx context.Context, base, updated *v1beta1.NodeClaim) error {
	if err := p.Client.Patch(ctx, updated, client.MergeFrom(base)); err != nil {
		log.FromContext(ctx).V(1).Info("Could not list the pods placed on a claim", "nodeclaim", base.Name, "error", fmt.Sprint(err))
		return err
	}
	p.State.ObserveWrite(updated, base.ResourceVersion)
	return nil
}
