package operator

import (
	"errors"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// errAWSNotImplemented is returned for --cloud-provider=aws until the EC2 provider lands.
var errAWSNotImplemented = errors.New("the aws cloud provider is not implemented yet: AWSNodeClass is defined and validated, the EC2 calls are not; run with --cloud-provider=fake")

// newCloudProvider builds the cloud named by --cloud-provider, batching its calls and
// avoiding for --unavailable-offering-ttl the offerings it refuses for lack of capacity.
func newCloudProvider(opts *Options, mgr manager.Manager) (cloudprovider.CloudProvider, error) {
	switch opts.CloudProvider {
	case ProviderFake:
		api, err := newFakeCloud(opts, mgr)
		if err != nil {
			return nil, err
		}
		return cloudprovider.New(api, cloudprovider.DefaultBatchOptions, cloudprovider.NewUnavailableOfferings(opts.UnavailableOfferingTTL, clock.RealClock{})), nil
	case ProviderAWS:
		return nil, errAWSNotImplemented
	default:
		return nil, errors.New("unknown cloud provider " + opts.CloudProvider)
	}
}
