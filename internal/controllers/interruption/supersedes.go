package interruption

import "github.com/stratos-sh/stratos/api/v1beta1"

// Supersedes reports whether notice is to replace what the claim records (nil for
// nothing). The same notice delivered again changes nothing. A rebalance recommendation
// never replaces anything, since it sets no deadline and a notice that does must not be
// forgotten; a spot interruption or scheduled change replaces a rebalance
// recommendation, and another of the two when it comes sooner.
func Supersedes(notice v1beta1.Interruption, recorded *v1beta1.Interruption) bool {
	switch {
	case recorded == nil:
		return true
	case notice.Kind == recorded.Kind && notice.NoticeTime.Equal(&recorded.NoticeTime):
		return false
	case notice.Kind == v1beta1.InterruptionRebalance:
		return false
	case recorded.Kind == v1beta1.InterruptionRebalance:
		return true
	case notice.Deadline == nil:
		return false
	}
	return recorded.Deadline == nil || notice.Deadline.Before(recorded.Deadline)
}
