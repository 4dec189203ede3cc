package provisioning

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// placedWriter writes the placed-pods lists of claims already on their way off the
// decision's path. The list only lets explain name a waiting pod's claim, while the
// decision is done once its claims are created and started: at 5,000 pods a round of
// these patches behind the creates took up to 0.8 s of a loaded API server, and made the
// slowest passes twice as long as their intents needed.
//
// Writes are per claim, one at a time, the newest asked list winning: a list asked while
// an earlier one of the claim is still being written builds on the earlier one, which the
// decision's picture does not show yet, so no name is lost to the ordering.
type placedWriter struct {
	// patch writes updated over base: the annotation is the only difference.
	patch func(ctx context.Context, base, updated *v1beta1.NodeClaim) error
	queue workqueue.TypedInterface[string]

	mu sync.Mutex
	// asked is the newest write asked for, per claim, until it is written.
	asked map[string]*placedWrite
}

type placedWrite struct {
	base, updated *v1beta1.NodeClaim
}

func newPlacedWriter(patch func(ctx context.Context, base, updated *v1beta1.NodeClaim) error) *placedWriter {
	return &placedWriter{patch: patch, queue: workqueue.NewTyped[string](), asked: map[string]*placedWrite{}}
}

// add asks for pods to be listed on claim, after the names listed already or asked for.
func (w *placedWriter) add(claim *v1beta1.NodeClaim, pods []*corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	listed := claim.Annotations[v1beta1.AnnotationPlacedPods]
	if earlier := w.asked[claim.Name]; earlier != nil {
		listed = earlier.updated.Annotations[v1beta1.AnnotationPlacedPods]
	}
	value := placedPods(listed, pods)
	if value == claim.Annotations[v1beta1.AnnotationPlacedPods] {
		return
	}
	updated := claim.DeepCopy()
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[v1beta1.AnnotationPlacedPods] = value
	w.asked[claim.Name] = &placedWrite{base: claim, updated: updated}
	w.queue.Add(claim.Name)
}

// run writes with workers writers at once until ctx ends.
func (w *placedWriter) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for w.writeNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	w.queue.ShutDown()
	wg.Wait()
}

// writeNext makes the newest write asked for the next claim in line; false once the
// queue is shut down. The queue hands a claim to one worker at a time.
func (w *placedWriter) writeNext(ctx context.Context) bool {
	name, shutdown := w.queue.Get()
	if shutdown {
		return false
	}
	defer w.queue.Done(name)
	w.mu.Lock()
	write := w.asked[name]
	w.mu.Unlock()
	if write == nil {
		return true
	}
	// A failed write only leaves explain without the claim's name (see patch).
	_ = w.patch(ctx, write.base, write.updated)
	w.mu.Lock()
	if w.asked[name] == write {
		delete(w.asked, name)
	}
	w.mu.Unlock()
	return true
}
