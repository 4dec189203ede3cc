// Package interruption reads the cloud's notices about instances: the EventBridge events
// that EC2 and AWS Health send, as AWS delivers them to an SQS queue (and as the fake
// cloud posts them). It only parses; the interruption controller
// (internal/controllers/interruption) acts on what it returns.
package interruption

import (
	"errors"
	"time"
)

// Kind is the kind of a notice.
type Kind string

const (
	// SpotInterruption: EC2 reclaims a spot instance two minutes after the notice (the
	// "EC2 Spot Instance Interruption Warning").
	SpotInterruption Kind = "SpotInterruption"
	// Rebalance: the instance is at elevated risk of interruption (the "EC2 Instance
	// Rebalance Recommendation"); it sets no deadline.
	Rebalance Kind = "RebalanceRecommendation"
	// ScheduledChange: AWS will retire, stop or reboot the instance for maintenance (an
	// "AWS Health Event" of EC2 in the scheduledChange category).
	ScheduledChange Kind = "ScheduledChange"
	// StateChange: the instance changed state (the "EC2 Instance State-change
	// Notification"), for whatever reason, Stratos's own stops included.
	StateChange Kind = "StateChange"
)

// SpotNoticePeriod is the time EC2 gives between a spot interruption warning and the
// interruption.
const SpotNoticePeriod = 2 * time.Minute

// Errors of Parse. Both mean that the message will never be understood, so that it is
// to be deleted rather than received again.
var (
	// ErrMalformed: the message is not an EventBridge event (not JSON, or the envelope
	// lacks its source or detail-type), or an event of a kind Stratos reads lacks a field
	// it needs or has one it cannot read.
	ErrMalformed = errors.New("malformed notice")
	// ErrForeign: a well-formed event of another source or detail-type than those Stratos
	// reads (another service's AWS Health event, an issue rather than a scheduled change):
	// the queue's rules let more through than Stratos handles.
	ErrForeign = errors.New("foreign notice")
)

// Notice is what an event says about instances.
type Notice struct {
	Kind Kind
	// ID is the event's id, the same on every delivery of the event.
	ID string
	// InstanceIDs are the instances the notice is about: one for EC2's events, those
	// the scheduled change affects for AWS Health's.
	InstanceIDs []string
	// Time is when the cloud gave the notice (the event's time).
	Time time.Time
	// Deadline is when the cloud takes the instance away: two minutes after a spot
	// interruption warning, the start of a scheduled change when the event gives it;
	// zero when there is none.
	Deadline time.Time
	// Action is what a spot interruption does to the instance (terminate, stop or
	// hibernate), as the warning says; empty for other kinds.
	Action string
	// State is the instance's new state for a StateChange (pending, running, stopping,
	// stopped, shutting-down, terminated); empty for other kinds.
	State string
}
