package disruption

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/state"
)

// candidate is a running claim of a pool with its Node and the pods bound to it.
type candidate struct {
	claim *v1alpha1.NodeClaim
	node  *corev1.Node
	pods  []corev1.Pod
}

// empty reports whether no workload pod is bound to the candidate's Node.
func (c candidate) empty() bool {
	for i := range c.pods {
		if state.Workload(&c.pods[i]) {
			return false
		}
	}
	return true
}

// blocked names what forbids disrupting the candidate voluntarily, or is "": the
// do-not-disrupt annotation on its Node or on one of its pods that has not finished.
func (c candidate) blocked() string {
	if c.node.Annotations[v1alpha1.AnnotationDoNotDisrupt] == "true" {
		return "the Node is annotated " + v1alpha1.AnnotationDoNotDisrupt
	}
	for i := range c.pods {
		pod := &c.pods[i]
		if pod.Annotations[v1alpha1.AnnotationDoNotDisrupt] == "true" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return "pod " + pod.Namespace + "/" + pod.Name + " is annotated " + v1alpha1.AnnotationDoNotDisrupt
		}
	}
	return ""
}

// emptiness remembers since when each claim's Node has been empty. It is kept in memory:
// after a restart the wait starts over, which only delays a give-back.
type emptiness map[string]time.Time

// observe records whether the candidate is empty at now and returns since when it has
// been, or zero when it is not.
func (e emptiness) observe(c candidate, now time.Time) time.Time {
	if !c.empty() {
		delete(e, c.claim.Name)
		return time.Time{}
	}
	since, ok := e[c.claim.Name]
	if !ok {
		since = now
		e[c.claim.Name] = since
	}
	return since
}

// forgetAllBut drops the claims not in live.
func (e emptiness) forgetAllBut(live map[string]bool) {
	for name := range e {
		if !live[name] {
			delete(e, name)
		}
	}
}
