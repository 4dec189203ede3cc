package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// catalog holds the region's instance types, the zones that offer them and their prices.
// Each is described once, by the first use or by run, and then refreshed in the
// background only, so that EC2 sees the same few describes however often InstanceTypes
// is called. The answer for a node class is memoised until the class's shape or one of
// them changes.
type catalog struct {
	types    *cached[typeCatalog]
	spot     *cached[spotPrices]
	onDemand *cached[onDemandPrices]
	opts     Options

	mu sync.Mutex
	// answers are InstanceTypes' answers by node class shape, for the versions in
	// answered; a new version of any of the three empties them.
	answers  map[classShape][]*cloudprovider.InstanceType
	answered [3]uint64
}

func newCatalog(opts Options, clients *Clients) *catalog {
	return &catalog{
		opts: opts,
		types: newCached("describing the instance types", opts.Clock, func(ctx context.Context) (typeCatalog, error) {
			return describeCatalog(ctx, clients.EC2)
		}),
		spot: newCached("describing the spot prices", opts.Clock, func(ctx context.Context) (spotPrices, error) {
			return describeSpotPrices(ctx, clients.EC2, opts.Clock.Now())
		}),
		onDemand: newCached("reading the on-demand prices from the Pricing API", opts.Clock, func(ctx context.Context) (onDemandPrices, error) {
			if clients.Pricing == nil {
				return nil, errNoPricingClient
			}
			return getOnDemandPrices(ctx, clients.Pricing, clients.Region)
		}),
	}
}

// run loads the catalogue and the prices and refreshes them, each on its own clock,
// until ctx ends: a Pricing API that does not answer delays nothing else.
func (c *catalog) run(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("aws-catalog"))
	var wg sync.WaitGroup
	wg.Go(func() { c.types.keepFresh(ctx, c.opts.Clock, c.opts.CatalogRefresh) })
	wg.Go(func() { c.spot.keepFresh(ctx, c.opts.Clock, c.opts.PriceRefresh) })
	wg.Go(func() { c.onDemand.keepFresh(ctx, c.opts.Clock, c.opts.PriceRefresh) })
	wg.Wait()
	return nil
}

// InstanceTypes lists the types a node class may launch: those of the architectures it
// has images for (and that can hibernate, if its nodes do), offered in the zones of its
// subnets, on demand and as spot, with prices. The answer is shared with other callers,
// who must not change it; offerings the cloud refused lately are turned unavailable by
// cloudprovider.New's wrapper.
func (c *Cloud) InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error) {
	class, ok := nodeClass.(*v1beta1.EC2NodeClass)
	if !ok || class == nil {
		return nil, fmt.Errorf("the aws cloud provider takes an EC2NodeClass, not %T", nodeClass)
	}
	shape, err := shapeOf(class)
	if err != nil {
		return nil, err
	}
	return c.catalog.instanceTypes(ctx, shape)
}

func (c *catalog) instanceTypes(ctx context.Context, shape classShape) ([]*cloudprovider.InstanceType, error) {
	types, typesVersion, err := c.types.get(ctx)
	if err != nil {
		return nil, err
	}
	// Prices never fail the call: without them, estimates stand in.
	spot, spotVersion, err := c.spot.get(ctx)
	if err != nil && ctx.Err() == nil {
		log.FromContext(ctx).V(1).Info("Spot prices are estimated", "reason", err.Error())
	}
	onDemand, onDemandVersion := c.onDemand.current()
	versions := [3]uint64{typesVersion, spotVersion, onDemandVersion}

	c.mu.Lock()
	defer c.mu.Unlock()
	if versions != c.answered {
		c.answers, c.answered = map[classShape][]*cloudprovider.InstanceType{}, versions
	}
	answer, ok := c.answers[shape]
	if !ok {
		answer = buildInstanceTypes(types, prices{spot: spot, onDemand: onDemand}, shape)
		c.answers[shape] = answer
	}
	return slices.Clone(answer), nil
}

// classShape is what of a node class decides its instance types: the zones of its
// subnets and the architectures of its images, each sorted and joined by commas, the
// size of its ephemeral storage in bytes, whether its nodes hibernate, what its
// volumes cost an hour while an instance is stopped, and how many volumes it attaches at
// launch (0: the image's own, taken as its root volume alone).
type classShape struct {
	zones, archs string
	ephemeral    int64
	hibernate    bool
	stoppedPrice float64
	disks        int64
}

// shapeOf reads a node class's shape from its status, which node class resolution
// writes; a class it has not resolved yet has no instance types.
func shapeOf(class *v1beta1.EC2NodeClass) (classShape, error) {
	var zones, archs []string
	for _, subnet := range class.Status.Subnets {
		if subnet.Zone != "" && !slices.Contains(zones, subnet.Zone) {
			zones = append(zones, subnet.Zone)
		}
	}
	for _, ami := range class.Status.AMIs {
		if ami.Architecture != "" && !slices.Contains(archs, ami.Architecture) {
			archs = append(archs, ami.Architecture)
		}
	}
	if len(archs) == 0 {
		return classShape{}, fmt.Errorf("EC2NodeClass %s is not ready: no AMI has been resolved for it yet", class.Name)
	}
	if len(zones) == 0 {
		return classShape{}, fmt.Errorf("EC2NodeClass %s is not ready: no subnet has been resolved for it yet", class.Name)
	}
	slices.Sort(zones)
	slices.Sort(archs)
	storage := ephemeralStorage(class)
	stopped, err := stoppedPricePerHour(class)
	if err != nil {
		return classShape{}, fmt.Errorf("EC2NodeClass %s: %w", class.Name, err)
	}
	return classShape{zones: strings.Join(zones, ","), archs: strings.Join(archs, ","), ephemeral: storage.Value(), hibernate: class.Spec.Hibernate, stoppedPrice: stopped,
		disks: int64(len(class.Spec.BlockDeviceMappings))}, nil
}

// prices are what is known of prices now.
type prices struct {
	spot     spotPrices
	onDemand onDemandPrices
}

// price is the price of t as capacityType in zone, and whether it is on sale: on demand
// at the Pricing API's price or the estimate; as spot at the price
// DescribeSpotPriceHistory lists, where a type and zone it does not list is not on sale,
// or at an estimate when it lists nothing at all.
func (p prices) price(t *catalogType, zone, capacityType string) (float64, bool) {
	onDemand, ok := p.onDemand[t.name]
	if !ok {
		onDemand = t.estimate
	}
	if capacityType == v1beta1.CapacityTypeOnDemand {
		return onDemand, true
	}
	if len(p.spot) == 0 {
		return estimateSpotPrice(onDemand), true
	}
	if spot, ok := p.spot[t.name][zone]; ok {
		return spot, true
	}
	return estimateSpotPrice(onDemand), false
}

// buildInstanceTypes is the answer of InstanceTypes for a node class of shape. A class
// whose nodes hibernate gets the types that can.
func buildInstanceTypes(types typeCatalog, p prices, shape classShape) []*cloudprovider.InstanceType {
	zones, archs := strings.Split(shape.zones, ","), strings.Split(shape.archs, ",")
	ephemeral := *resource.NewQuantity(shape.ephemeral, resource.BinarySI)
	var out []*cloudprovider.InstanceType
	for _, t := range types {
		if !slices.Contains(archs, t.arch) || (shape.hibernate && !t.hibernation) {
			continue
		}
		var offerings []cloudprovider.Offering
		for _, zone := range zones {
			if !t.zones[zone] {
				continue
			}
			for _, capacityType := range t.capacityTypes {
				price, available := p.price(t, zone, capacityType)
				offerings = append(offerings, cloudprovider.Offering{Zone: zone, CapacityType: capacityType, PricePerHour: price, StoppedPricePerHour: shape.stoppedPrice, Available: available})
			}
		}
		if len(offerings) == 0 {
			continue
		}
		capacity := t.capacity.DeepCopy()
		capacity[corev1.ResourceEphemeralStorage] = ephemeral.DeepCopy()
		out = append(out, &cloudprovider.InstanceType{
			Name:         t.name,
			Architecture: t.arch,
			Capacity:     capacity,
			Overhead:     cloudprovider.EstimatedOverhead(t.vcpus, t.pods, ephemeral),
			Offerings:    offerings,
			Attributes:   maps.Clone(t.attributes),
			AttachLimits: ebsAttachLimit(t.ebsAttachments, shape.disks),
		})
	}
	return out
}
