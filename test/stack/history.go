package stack

import (
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// PhaseSeen watches the claim from the version it has now and returns whether any
// version since has been in phase. A test that waits for a phase a controller may move
// the claim on from within a second (an empty node consolidated) reads it from the
// claim's history, which a slow poll cannot miss.
func (f *Fixture) PhaseSeen(name string, phase v1beta1.NodeClaimPhase) (seen func() bool) {
	f.T.Helper()
	claim := f.Claim(name)
	var was atomic.Bool
	was.Store(claim.Status.Phase == phase)
	watcher, err := client.NewWithWatch(f.Env.Config, client.Options{Scheme: f.Env.Scheme})
	if err != nil {
		f.T.Fatal(err)
	}
	w, err := watcher.Watch(f.Ctx, &v1beta1.NodeClaimList{}, client.MatchingFields{"metadata.name": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: claim.ResourceVersion}})
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(w.Stop)
	go func() {
		for event := range w.ResultChan() {
			if c, ok := event.Object.(*v1beta1.NodeClaim); ok && c.Status.Phase == phase {
				was.Store(true)
			}
		}
	}()
	return was.Load
}
