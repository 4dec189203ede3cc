package operator

import (
	"context"
	"errors"
	"reflect"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// cloud is the cloud provider the controllers call, with what the interruption
// controller needs of it.
type cloud struct {
	provider cloudprovider.CloudProvider
	// notices is the cloud's notice queue; nil when it has none.
	notices cloudprovider.NoticeQueue
	// unavailable is the provider's cache of unavailable offerings.
	unavailable *cloudprovider.UnavailableOfferings
}

// newCloudProvider builds the cloud named by --cloud-provider, batching its calls and
// avoiding for --unavailable-offering-ttl the offerings it refuses for lack of capacity,
// or whose spot instances it interrupts.
func newCloudProvider(ctx context.Context, opts *Options, mgr manager.Manager) (*cloud, error) {
	var api cloudprovider.API
	var err error
	switch opts.CloudProvider {
	case ProviderFake:
		api, err = newFakeCloud(opts, mgr)
	case ProviderAWS:
		api, err = newAWSCloud(ctx, opts, mgr)
	case ProviderClusterAPI:
		api, err = newClusterAPICloud(opts, mgr)
	default:
		err = errors.New("unknown cloud provider " + opts.CloudProvider)
	}
	if err != nil {
		return nil, err
	}
	// One cache for the provider and the interruption controller: an offering marked
	// for an interruption is one launches avoid.
	unavailable := cloudprovider.NewUnavailableOfferings(opts.UnavailableOfferingTTL, clock.RealClock{})
	return &cloud{
		provider:    cloudprovider.New(api, cloudprovider.DefaultBatchOptions, unavailable),
		notices:     NoticesOf(api),
		unavailable: unavailable,
	}, nil
}

// NoticesOf returns the notice queue a cloud's API offers (on AWS, the SQS queue of
// --interruption-queue), or nil when it offers none.
func NoticesOf(api cloudprovider.API) cloudprovider.NoticeQueue {
	offers, ok := api.(interface {
		Notices() cloudprovider.NoticeQueue
	})
	if !ok {
		return nil
	}
	queue := offers.Notices()
	// A nil pointer in the interface is no queue either: receiving from it would crash.
	if queue == nil || (reflect.ValueOf(queue).Kind() == reflect.Pointer && reflect.ValueOf(queue).IsNil()) {
		return nil
	}
	return queue
}
