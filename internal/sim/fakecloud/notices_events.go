package fakecloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The EventBridge events the cloud posts, in the JSON EventBridge delivers to an SQS
// target: the envelope every AWS event has, and the detail of each kind. They are the
// fake's own structs, written from AWS's documentation of the events, rather than the
// parser's (internal/interruption), so that a test of the parser against the fake checks
// one reading of the format against another.

// Account is the AWS account ID the fake cloud's events carry.
const Account = "123456789012"

// The detail types and sources of the events.
const (
	DetailTypeSpotInterruption = "EC2 Spot Instance Interruption Warning"
	DetailTypeRebalance        = "EC2 Instance Rebalance Recommendation"
	DetailTypeStateChange      = "EC2 Instance State-change Notification"
	DetailTypeHealth           = "AWS Health Event"
	SourceEC2                  = "aws.ec2"
	SourceHealth               = "aws.health"
)

// SpotNotice is the notice EC2 gives of a spot interruption, which handlers assume: the
// warning says nothing of the deadline.
const SpotNotice = 2 * time.Minute

// eventBridgeEvent is the envelope of every event.
type eventBridgeEvent struct {
	Version    string   `json:"version"`
	ID         string   `json:"id"`
	DetailType string   `json:"detail-type"`
	Source     string   `json:"source"`
	Account    string   `json:"account"`
	Time       string   `json:"time"`
	Region     string   `json:"region"`
	Resources  []string `json:"resources"`
	Detail     any      `json:"detail"`
}

// spotInterruptionDetail is the detail of a spot interruption warning.
type spotInterruptionDetail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
}

// rebalanceDetail is the detail of a rebalance recommendation.
type rebalanceDetail struct {
	InstanceID string `json:"instance-id"`
}

// stateChangeDetail is the detail of a state-change notification.
type stateChangeDetail struct {
	InstanceID string `json:"instance-id"`
	State      string `json:"state"`
}

// healthDetail is the detail of an AWS Health event; times are in RFC 1123 with GMT, as
// AWS Health writes them.
type healthDetail struct {
	EventArn          string              `json:"eventArn"`
	Service           string              `json:"service"`
	EventTypeCode     string              `json:"eventTypeCode"`
	EventTypeCategory string              `json:"eventTypeCategory"`
	StartTime         string              `json:"startTime"`
	EndTime           string              `json:"endTime"`
	EventDescription  []healthDescription `json:"eventDescription"`
	AffectedEntities  []healthEntity      `json:"affectedEntities"`
}

type healthDescription struct {
	Language          string `json:"language"`
	LatestDescription string `json:"latestDescription"`
}

type healthEntity struct {
	EntityValue string `json:"entityValue"`
}

// instanceRetirementCode is the AWS Health event type of an instance retirement.
const instanceRetirementCode = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"

// event builds the envelope of an event about one instance at the time given; the
// number n makes its ID.
func (c *Cloud) event(n int, detailType, source string, at time.Time, resource string, detail any) []byte {
	e := eventBridgeEvent{
		Version:    "0",
		ID:         eventID(n),
		DetailType: detailType,
		Source:     source,
		Account:    Account,
		// EventBridge writes the time to the second, in UTC.
		Time:      at.UTC().Format("2006-01-02T15:04:05Z"),
		Region:    c.region,
		Resources: []string{resource},
		Detail:    detail,
	}
	body, err := json.Marshal(e)
	if err != nil {
		// Every field is a string or a struct of strings: encoding cannot fail.
		panic(fmt.Sprintf("fake cloud: encoding an event: %v", err))
	}
	return body
}

func (c *Cloud) instanceARN(id string) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", c.region, Account, id)
}

// spotInterruptionEvent warns that a spot instance will be terminated. The event's time
// is when EC2 would have warned for the instance to end when it does, SpotNotice before
// the termination begins: a handler, which reads the deadline as the time plus two
// minutes, then finds the true deadline whatever the notice and the time scale.
func (c *Cloud) spotInterruptionEvent(n int, id string, terminateAt time.Time) []byte {
	warnedAt := terminateAt.Add(-SpotNotice)
	return c.event(n, DetailTypeSpotInterruption, SourceEC2, warnedAt, c.instanceARN(id),
		spotInterruptionDetail{InstanceID: id, InstanceAction: "terminate"})
}

func (c *Cloud) rebalanceEvent(n int, id string, at time.Time) []byte {
	return c.event(n, DetailTypeRebalance, SourceEC2, at, c.instanceARN(id), rebalanceDetail{InstanceID: id})
}

func (c *Cloud) stateChangeEvent(n int, id string, state cloudprovider.InstanceState, at time.Time) []byte {
	return c.event(n, DetailTypeStateChange, SourceEC2, at, c.instanceARN(id), stateChangeDetail{InstanceID: id, State: string(state)})
}

// scheduledChangeEvent announces the retirement of an instance at retireAt, as AWS
// Health does for instances on degraded hardware.
func (c *Cloud) scheduledChangeEvent(n int, id string, at, retireAt time.Time) []byte {
	return c.event(n, DetailTypeHealth, SourceHealth, at, id, healthDetail{
		EventArn:          fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", c.region, instanceRetirementCode, instanceRetirementCode, eventID(n)),
		Service:           "EC2",
		EventTypeCode:     instanceRetirementCode,
		EventTypeCategory: "scheduledChange",
		StartTime:         retireAt.UTC().Format(http.TimeFormat),
		EndTime:           retireAt.UTC().Add(7 * 24 * time.Hour).Format(http.TimeFormat),
		EventDescription: []healthDescription{{Language: "en_US", LatestDescription: fmt.Sprintf(
			"EC2 has detected degradation of the underlying hardware hosting your Amazon EC2 instance %s. The instance is scheduled for retirement at %s.",
			id, retireAt.UTC().Format(http.TimeFormat))}},
		AffectedEntities: []healthEntity{{EntityValue: id}},
	})
}

// eventID is a UUID-shaped event ID, numbered as messageID is.
func eventID(n int) string {
	return fmt.Sprintf("00000000-0000-4000-9000-%012x", n)
}
