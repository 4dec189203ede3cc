package interruption

import (
	"encoding/json"
	"fmt"
	"time"
)

// The sources and detail-types of the events Stratos reads, as EventBridge names them.
const (
	sourceEC2    = "aws.ec2"
	sourceHealth = "aws.health"

	detailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	detailRebalance        = "EC2 Instance Rebalance Recommendation"
	detailStateChange      = "EC2 Instance State-change Notification"
	detailHealth           = "AWS Health Event"

	healthServiceEC2        = "EC2"
	healthScheduledCategory = "scheduledChange"
)

// envelope is the part of an EventBridge event common to every source. The account,
// region, version and resources are not read: the queue is the cluster's own, and the
// instances are named in the detail.
type envelope struct {
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Time       string          `json:"time"`
	Detail     json.RawMessage `json:"detail"`
}

// ec2Detail is the detail of EC2's instance events.
type ec2Detail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
	State          string `json:"state"`
}

// healthDetail is the detail of an AWS Health event.
type healthDetail struct {
	Service           string `json:"service"`
	EventTypeCategory string `json:"eventTypeCategory"`
	StartTime         string `json:"startTime"`
	AffectedEntities  []struct {
		EntityValue string `json:"entityValue"`
	} `json:"affectedEntities"`
}

// Parse reads an EventBridge event as AWS delivers it to SQS. An error wraps ErrMalformed
// or ErrForeign.
func Parse(body []byte) (Notice, error) {
	var event envelope
	if err := json.Unmarshal(body, &event); err != nil {
		return Notice{}, fmt.Errorf("%w: not an EventBridge event: %v", ErrMalformed, err)
	}
	if event.Source == "" || event.DetailType == "" {
		return Notice{}, fmt.Errorf("%w: not an EventBridge event: no source or detail-type", ErrMalformed)
	}
	kind, known := kindOf(event.Source, event.DetailType)
	if !known {
		return Notice{}, fmt.Errorf("%w: %s event %q", ErrForeign, event.Source, event.DetailType)
	}
	if kind == ScheduledChange {
		// Which Health events are scheduled changes of EC2 only the detail says; tell a
		// foreign one before asking for the fields of a notice.
		return parseHealth(event)
	}
	notice, err := noticeOf(kind, event)
	if err != nil {
		return Notice{}, err
	}
	var detail ec2Detail
	if err := json.Unmarshal(event.Detail, &detail); err != nil {
		return Notice{}, fmt.Errorf("%w: %s %s: detail: %v", ErrMalformed, event.DetailType, event.ID, err)
	}
	if detail.InstanceID == "" {
		return Notice{}, fmt.Errorf("%w: %s %s: no detail.instance-id", ErrMalformed, event.DetailType, event.ID)
	}
	notice.InstanceIDs = []string{detail.InstanceID}
	switch kind {
	case SpotInterruption:
		notice.Deadline = notice.Time.Add(SpotNoticePeriod)
		notice.Action = detail.InstanceAction
	case StateChange:
		if detail.State == "" {
			return Notice{}, fmt.Errorf("%w: %s %s: no detail.state", ErrMalformed, event.DetailType, event.ID)
		}
		notice.State = detail.State
	}
	return notice, nil
}

// kindOf is the kind of the events of a source and detail-type; known is false for
// those Stratos does not read.
func kindOf(source, detailType string) (kind Kind, known bool) {
	switch {
	case source == sourceEC2 && detailType == detailSpotInterruption:
		return SpotInterruption, true
	case source == sourceEC2 && detailType == detailRebalance:
		return Rebalance, true
	case source == sourceEC2 && detailType == detailStateChange:
		return StateChange, true
	case source == sourceHealth && detailType == detailHealth:
		return ScheduledChange, true
	}
	return "", false
}

// noticeOf starts the notice of an event: its kind, id and time, which every kind needs.
func noticeOf(kind Kind, event envelope) (Notice, error) {
	if event.ID == "" {
		return Notice{}, fmt.Errorf("%w: %s: no id", ErrMalformed, event.DetailType)
	}
	if len(event.Detail) == 0 || string(event.Detail) == "null" {
		return Notice{}, fmt.Errorf("%w: %s %s: no detail", ErrMalformed, event.DetailType, event.ID)
	}
	at, err := time.Parse(time.RFC3339, event.Time)
	if err != nil {
		return Notice{}, fmt.Errorf("%w: %s %s: time %q: %v", ErrMalformed, event.DetailType, event.ID, event.Time, err)
	}
	return Notice{Kind: kind, ID: event.ID, Time: at}, nil
}

// parseHealth reads an AWS Health event: a scheduled change of EC2 instances is a
// notice; any other service or category is foreign.
func parseHealth(event envelope) (Notice, error) {
	var detail healthDetail
	if len(event.Detail) > 0 {
		if err := json.Unmarshal(event.Detail, &detail); err != nil {
			return Notice{}, fmt.Errorf("%w: %s %s: detail: %v", ErrMalformed, event.DetailType, event.ID, err)
		}
	}
	if detail.Service != healthServiceEC2 || detail.EventTypeCategory != healthScheduledCategory {
		return Notice{}, fmt.Errorf("%w: AWS Health event of service %q, category %q", ErrForeign, detail.Service, detail.EventTypeCategory)
	}
	notice, err := noticeOf(ScheduledChange, event)
	if err != nil {
		return Notice{}, err
	}
	for _, entity := range detail.AffectedEntities {
		if entity.EntityValue != "" {
			notice.InstanceIDs = append(notice.InstanceIDs, entity.EntityValue)
		}
	}
	if len(notice.InstanceIDs) == 0 {
		return Notice{}, fmt.Errorf("%w: %s %s: no detail.affectedEntities[].entityValue", ErrMalformed, event.DetailType, event.ID)
	}
	if detail.StartTime != "" {
		if notice.Deadline, err = parseHealthTime(detail.StartTime); err != nil {
			return Notice{}, fmt.Errorf("%w: %s %s: startTime %q: %v", ErrMalformed, event.DetailType, event.ID, detail.StartTime, err)
		}
	}
	return notice, nil
}

// parseHealthTime reads an AWS Health time: RFC 1123 with a zone name ("Sat, 05 Jun
// 2016 15:10:09 GMT") as AWS Health's EventBridge events write it, or RFC 3339, as the
// events' own time is written.
func parseHealthTime(value string) (time.Time, error) {
	if t, err := time.Parse(time.RFC1123, value); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, value)
}
