package operator

import (
	"context"
	"errors"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// newCloudProvider builds the cloud named by --cloud-provider, batching its calls and
// avoiding for --unavailable-offering-ttl the offerings it refuses for lack of capacity.
func newCloudProvider(ctx context.Context, opts *Options, mgr manager.Manager) (cloudprovider.CloudProvider, error) {
	var api cloudprovider.API
	var err error
	switch opts.CloudProvider {
	case ProviderFake:
		api, err = newFakeCloud(opts, mgr)
	case ProviderAWS:
		api, err = newAWSCloud(ctx, opts, mgr)
	default:
		err = errors.New("unknown cloud provider " + opts.CloudProvider)
	}
	if err != nil {
		return nil, err
	}
	return cloudprovider.New(api, cloudprovider.DefaultBatchOptions, cloudprovider.NewUnavailableOfferings(opts.UnavailableOfferingTTL, clock.RealClock{})), nil
}
