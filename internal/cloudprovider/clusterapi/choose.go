package clusterapi

import (
	"fmt"
	"strings"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// choose returns the cheapest offering of the types that meets the request's
// requirements, whose type leaves room for its requests under its kubelet
// configuration, and that the request does not say is unavailable; ties go to the first
// type name, then zone, so that choices repeat. With none, the error is
// InsufficientCapacity and says whether offerings were passed over as unavailable.
func choose(className string, types []*cloudprovider.InstanceType, req *cloudprovider.CreateRequest) (*cloudprovider.InstanceType, cloudprovider.Offering, error) {
	excluded := make(map[cloudprovider.OfferingKey]bool, len(req.Unavailable))
	for _, key := range req.Unavailable {
		excluded[key] = true
	}
	var (
		bestType *cloudprovider.InstanceType
		best     cloudprovider.Offering
		avoided  []string
	)
	for _, t := range types {
		if !cloudprovider.HasRoomFor(t, req.Kubelet, req.Requests) {
			continue
		}
		for _, o := range t.Offerings {
			ok, err := cloudprovider.Satisfies(t, o, req.Requirements)
			if err != nil {
				return nil, best, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "", "%v", err)
			}
			switch {
			case !ok || !o.Available:
			case excluded[t.Key(o)]:
				avoided = append(avoided, t.Key(o).String())
			case bestType == nil || cheaper(t, o, bestType, best):
				bestType, best = t, o
			}
		}
	}
	switch {
	case bestType != nil:
		return bestType, best, nil
	case len(avoided) > 0:
		return nil, best, cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, cloudprovider.OpCreate, "",
			"every offering of ClusterAPINodeClass %s that satisfies the requirements and requests is marked unavailable: %s",
			className, summarize(avoided, 5))
	default:
		return nil, best, cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, cloudprovider.OpCreate, "",
			"no instance type of ClusterAPINodeClass %s satisfies the requirements and requests", className)
	}
}

// cheaper orders offerings by price, then type name, then zone.
func cheaper(t *cloudprovider.InstanceType, o cloudprovider.Offering, bestType *cloudprovider.InstanceType, best cloudprovider.Offering) bool {
	if o.PricePerHour != best.PricePerHour {
		return o.PricePerHour < best.PricePerHour
	}
	if t.Name != bestType.Name {
		return t.Name < bestType.Name
	}
	return o.Zone < best.Zone
}

// summarize joins the first limit items and counts the rest.
func summarize(items []string, limit int) string {
	if len(items) <= limit {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:limit], ", "), len(items)-limit)
}
