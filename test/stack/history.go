package stack

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ClaimVersions watches the claim from the version it has now and returns the versions
// seen so far, in order, that one first: what controllers wrote on the way, even where
// the claim moved on, or was deleted, before a poll could read it.
func (f *Fixture) ClaimVersions(name string) (versions func() []v1beta1.NodeClaim) {
	f.T.Helper()
	claim := f.Claim(name)
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
	var mu sync.Mutex
	seen := []v1beta1.NodeClaim{*claim}
	go func() {
		for event := range w.ResultChan() {
			if c, ok := event.Object.(*v1beta1.NodeClaim); ok {
				mu.Lock()
				seen = append(seen, *c)
				mu.Unlock()
			}
		}
	}()
	return func() []v1beta1.NodeClaim {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// PhaseSeen watches the claim from the version it has now and returns whether any
// version since has been in phase. A test that waits for a phase a controller may move
// the claim on from within a second (an empty node consolidated) reads it from the
// claim's history, which a slow poll cannot miss.
func (f *Fixture) PhaseSeen(name string, phase v1beta1.NodeClaimPhase) (seen func() bool) {
	f.T.Helper()
	versions := f.ClaimVersions(name)
	return func() bool {
		return slices.ContainsFunc(versions(), func(c v1beta1.NodeClaim) bool { return c.Status.Phase == phase })
	}
}
