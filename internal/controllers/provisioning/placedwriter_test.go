package provisioning

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A list asked while the claim's earlier one is still being written builds on the
// earlier one, though the claim as the decision saw it shows neither; the newest write
// wins, and a claim whose list does not change is not written.
func TestPlacedWriterBuildsOnTheListBeingWritten(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	type patch struct{ base, listed string }
	writing, release, written := make(chan struct{}, 4), make(chan struct{}), make(chan patch, 4)
	w := newPlacedWriter(func(_ context.Context, base, updated *v1beta1.NodeClaim) error {
		writing <- struct{}{}
		<-release
		written <- patch{base.Annotations[v1beta1.AnnotationPlacedPods], updated.Annotations[v1beta1.AnnotationPlacedPods]}
		return nil
	})
	stopped := make(chan struct{})
	go func() { w.run(ctx, 2); close(stopped) }()
	claim := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "on-its-way",
		Annotations: map[string]string{v1beta1.AnnotationPlacedPods: "default/a"}}}

	w.add(claim, []*corev1.Pod{namedPod("default", "a")})
	w.add(claim, []*corev1.Pod{namedPod("default", "b")})
	<-writing // the first write is under way: one claim is written by one worker at a time
	w.add(claim, []*corev1.Pod{namedPod("default", "c")})
	release <- struct{}{}
	<-writing
	release <- struct{}{}
	first, second := <-written, <-written
	if first.listed != "default/a,default/b" {
		t.Errorf("the first write lists %q, want default/a,default/b", first.listed)
	}
	if second.listed != "default/a,default/b,default/c" {
		t.Errorf("the write asked during the first lists %q, want it to build on the first", second.listed)
	}
	if first.base != "default/a" || second.base != "default/a" {
		t.Errorf("writes made over %q and %q, want the claim as the decisions saw it", first.base, second.base)
	}
	// Any write still queued goes through, and the writer stops once the queue is empty.
	close(release)
	cancel()
	<-stopped
	if extra := len(written); extra != 0 {
		t.Errorf("%d writes more than the two asked for", extra)
	}
	if len(w.asked) != 0 {
		t.Errorf("%d writes still asked for after both were written", len(w.asked))
	}
}
