package fakecloud

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"net/netip"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// Create launches the cheapest offering that satisfies the request, or returns the
// instance an earlier call with the same client token launched, whatever its state.
func (c *Cloud) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	c.callLatency(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	if err := c.beginCall(cloudprovider.OpCreate, now); err != nil {
		return nil, err
	}
	class, err := asFakeNodeClass(req.NodeClass)
	if err != nil {
		return nil, err
	}
	faults := class.faults()
	if err := c.classFault(faults, cloudprovider.OpCreate, ""); err != nil {
		return nil, err
	}
	if id, ok := c.tokens[req.ClientToken]; ok && req.ClientToken != "" {
		return c.instances[id].snapshot(), nil
	}
	instanceType, offering, err := c.choose(class, req)
	if err != nil {
		return nil, err
	}

	c.launched++
	id := c.newID()
	inst := &instance{
		Instance: cloudprovider.Instance{
			ID:           id,
			ProviderID:   fmt.Sprintf("fake:///%s/%s", offering.Zone, id),
			Type:         instanceType.Name,
			Zone:         offering.Zone,
			CapacityType: offering.CapacityType,
			Architecture: instanceType.Architecture,
			Tags:         maps.Clone(req.Tags),
			LaunchTime:   now,
		},
		token:         req.ClientToken,
		privateIP:     privateIP(c.launched),
		instanceType:  instanceType,
		labels:        maps.Clone(req.Labels),
		kubelet:       req.Kubelet.DeepCopy(),
		physics:       c.physics.With(class.physics()),
		faults:        faults.DeepCopy(),
		neverRegister: c.neverRegisters(faults),
		hibernation:   class.hibernate(),
	}
	inst.hostname = hostname(inst.privateIP)
	inst.images = physics.NewImageStore(id, inst.physics, c.timeScale, imagePullErrors(faults))
	for _, t := range req.Taints {
		inst.taints = append(inst.taints, *t.DeepCopy())
	}
	inst.launch(now, c.drawer(inst.physics))
	c.publish(inst)
	c.instances[id] = inst
	if req.ClientToken != "" {
		c.tokens[req.ClientToken] = id
	}
	c.notify()
	return inst.snapshot(), nil
}

// choose returns the cheapest available offering that satisfies the request, of a type
// whose allocatable under the request's kubelet configuration fits its requests; ties
// go to the first type name, then zone, then capacity type, so that choices repeat.
// Like an EC2 fleet falling through its overrides, it passes over the offerings the
// injected faults put out of capacity, and those the request says are unavailable; when
// nothing is left, the error names the offerings the faults refused, for the caller to
// avoid them next time.
func (c *Cloud) choose(class *fakeNodeClass, req *cloudprovider.CreateRequest) (*cloudprovider.InstanceType, cloudprovider.Offering, error) {
	var (
		bestType *cloudprovider.InstanceType
		best     cloudprovider.Offering
		// unavailable are the compatible offerings out of capacity, for the error message.
		unavailable []string
		// refused are those the faults put out of capacity, which the error carries.
		refused []cloudprovider.OfferingKey
		// avoided counts those skipped because the request says they are unavailable.
		avoided int
		// candidates are the offerings the launch may use.
		candidates []cloudprovider.OfferingKey
	)
	excluded := make(map[cloudprovider.OfferingKey]bool, len(req.Unavailable))
	for _, key := range req.Unavailable {
		excluded[key] = true
	}
	for _, t := range c.instanceTypes(class) {
		if !cloudprovider.HasRoomFor(t, req.Kubelet, req.Requests) {
			continue
		}
		for _, o := range t.Offerings {
			ok, err := cloudprovider.Satisfies(t, o, req.Requirements)
			if err != nil {
				return nil, best, fmt.Errorf("fake cloud: %w", err)
			}
			if !ok {
				continue
			}
			key := t.Key(o)
			switch {
			case !o.Available:
			case excluded[key]:
				avoided++
			case c.outOfCapacity(class.faults(), key):
				refused = append(refused, key)
			default:
				candidates = append(candidates, key)
				if bestType == nil || cheaper(t, o, bestType, best) {
					bestType, best = t, o
				}
				continue
			}
			unavailable = append(unavailable, key.String())
		}
	}
	switch {
	case bestType != nil:
		if limit, ok := c.accountLimitOn(bestType.Key(best)); ok {
			return nil, best, limitError(limit, candidates)
		}
		return bestType, best, nil
	case len(unavailable) == 0:
		return nil, best, cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, cloudprovider.OpCreate, "",
			"no instance type of node class %s satisfies the requirements and requests", class.name())
	default:
		err := cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, cloudprovider.OpCreate, "",
			"all %d offerings of node class %s that satisfy the requirements and requests are out of capacity: %s",
			len(unavailable), class.name(), summarize(unavailable, 5))
		if avoided > 0 {
			err.Message += fmt.Sprintf(" (%d of them marked unavailable by the caller)", avoided)
		}
		err.Offerings = refused
		return nil, best, err
	}
}

func cheaper(t *cloudprovider.InstanceType, o cloudprovider.Offering, bestType *cloudprovider.InstanceType, best cloudprovider.Offering) bool {
	if o.PricePerHour != best.PricePerHour {
		return o.PricePerHour < best.PricePerHour
	}
	if t.Name != bestType.Name {
		return t.Name < bestType.Name
	}
	if o.Zone != best.Zone {
		return o.Zone < best.Zone
	}
	return o.CapacityType < best.CapacityType
}

// summarize joins the first limit items and counts the rest.
func summarize(items []string, limit int) string {
	if len(items) <= limit {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:limit], ", "), len(items)-limit)
}

// newID returns an unused EC2-style instance ID: i- and 17 hex digits. The caller holds the lock.
func (c *Cloud) newID() string {
	for {
		id := fmt.Sprintf("i-%x%016x", c.rng.IntN(16), c.rng.Uint64())
		if _, taken := c.instances[id]; !taken {
			return id
		}
	}
}

// privateIP numbers instances from 10.0.1.4, the first address EC2 hands out in a subnet.
func privateIP(n int) string {
	var ip [4]byte
	binary.BigEndian.PutUint32(ip[:], 10<<24+1<<8+3+uint32(n))
	return netip.AddrFrom4(ip).String()
}

// hostname is EC2's IP-based name, which is unique and a valid DNS subdomain.
func hostname(ip string) string {
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + ".fake.internal"
}

// fakeNodeClass is the node class of a request; nil means the whole catalogue, no overrides.
type fakeNodeClass v1beta1.FakeNodeClass

func asFakeNodeClass(obj client.Object) (*fakeNodeClass, error) {
	switch nc := obj.(type) {
	case nil:
		return nil, nil
	case *v1beta1.FakeNodeClass:
		return (*fakeNodeClass)(nc), nil
	default:
		return nil, fmt.Errorf("fake cloud: node class %T is not a FakeNodeClass", obj)
	}
}

func (nc *fakeNodeClass) name() string {
	if nc == nil {
		return "<none>"
	}
	return nc.Name
}

func (nc *fakeNodeClass) faults() *v1beta1.FakeFaults {
	if nc == nil {
		return nil
	}
	return nc.Spec.Faults
}

// hibernate reports whether the class launches instances able to hibernate.
func (nc *fakeNodeClass) hibernate() bool {
	return nc != nil && nc.Spec.Hibernate
}

func (nc *fakeNodeClass) physics() *v1beta1.FakePhysics {
	if nc == nil {
		return nil
	}
	return nc.Spec.Physics
}

// limitError is the refusal of a launch by an account limit: it names the limit and
// the offerings of the launch the limit covers.
func limitError(limit AccountLimit, candidates []cloudprovider.OfferingKey) *cloudprovider.Error {
	err := cloudprovider.NewError(cloudprovider.CodeQuotaExceeded, cloudprovider.OpCreate, "", "%s: the account may launch no more of these offerings (injected)", limit.Limit)
	err.Limit = limit.Limit
	for _, key := range candidates {
		if limit.covers(key) {
			err.Offerings = append(err.Offerings, key)
		}
	}
	return err
}
