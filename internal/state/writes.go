package state

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// WriteConfirmTimeout bounds how long a claim this process wrote counts as written
// while the informer has not shown the write. The informer shows a write within a
// second or two; one it never shows was undone meanwhile (a claim created and deleted
// while the watch was down, which a relist cannot report as deleted since the informer
// never had it). Past the bound the write is forgotten and the informer's picture holds,
// so that a claim that does not exist stops attracting pods.
const WriteConfirmTimeout = 30 * time.Second

// observedWrite is a claim as this process wrote it, before the informer shows it.
type observedWrite struct {
	claim *v1beta1.NodeClaim
	// base is the resource version the write was made on; "" for a creation.
	base string
	at   time.Time
}

// ObserveWrite records a claim this process just created or changed, so that the next
// snapshot sees the write before the informer brings it: a decision made on a picture
// without its own latest writes would take the same capacity twice. previous is the
// resource version the write was made on ("" for a creation). A claim the informer
// already moved past the write is left as the informer has it.
func (c *Cluster) ObserveWrite(claim *v1beta1.NodeClaim, previous string) {
	c.mu.Lock()
	current, pending := c.claims[claim.Name], c.writes[claim.Name]
	onTopOfInformer := current == nil || current.ResourceVersion == previous
	onTopOfOwnWrite := pending.claim != nil && pending.claim.ResourceVersion == previous
	if !onTopOfInformer && !onTopOfOwnWrite {
		c.mu.Unlock()
		return // the informer moved past the version the write was made on
	}
	c.writes[claim.Name] = observedWrite{claim: claim, base: previous, at: c.clock.Now()}
	c.version++
	lapsed := c.nominationsLapseLocked(claim.Name, claim)
	notify := c.onPending
	c.mu.Unlock()
	if lapsed && notify != nil {
		notify()
	}
}

// ObserveDeletion records that this process just deleted a claim: until the informer
// shows it, the claim counts as being deleted.
func (c *Cluster) ObserveDeletion(claim *v1beta1.NodeClaim) {
	deleted := claim.DeepCopy()
	if deleted.DeletionTimestamp.IsZero() {
		deleted.DeletionTimestamp = &metav1.Time{Time: c.clock.Now()}
	}
	c.ObserveWrite(deleted, claim.ResourceVersion)
}

// confirmWriteLocked forgets a write once the informer brings a version other than the
// one the write was made on: the write itself, or a later one. The caller holds the lock.
func (c *Cluster) confirmWriteLocked(name, resourceVersion string, deleted bool) {
	if w, ok := c.writes[name]; ok && (deleted || resourceVersion != w.base) {
		delete(c.writes, name)
	}
}

// claimsLocked is every claim as this process sees it: the informer's, with its own
// writes the informer does not show yet, those older than WriteConfirmTimeout dropped.
// It also returns when the oldest write still counted expires (zero when none). The
// caller holds the lock.
func (c *Cluster) claimsLocked(now time.Time) (map[string]*v1beta1.NodeClaim, time.Time) {
	claims := make(map[string]*v1beta1.NodeClaim, len(c.claims)+len(c.writes))
	for name, claim := range c.claims {
		claims[name] = claim
	}
	var expires time.Time
	for name, w := range c.writes {
		until := w.at.Add(WriteConfirmTimeout)
		if !now.Before(until) {
			delete(c.writes, name)
			c.version++
			continue
		}
		claims[name] = w.claim
		if expires.IsZero() || until.Before(expires) {
			expires = until
		}
	}
	return claims, expires
}
