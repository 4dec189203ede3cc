package aws

import (
	"context"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// ProviderName is the name of the EC2 provider, as --cloud-provider takes it.
const ProviderName = "aws"

// Cloud implements cloudprovider.API on EC2.
type Cloud struct {
	opts    Options
	clients *Clients
	// catalog holds instance types, offerings and prices, described once and refreshed
	// in the background, so that describe calls do not grow with load.
	catalog *catalog
	// templates are the launch templates of the node classes, made once per content.
	templates *launchTemplates
	// notices is the interruption queue; nil when none is configured.
	notices *InterruptionQueue
}

var _ cloudprovider.API = (*Cloud)(nil)

// New returns the EC2 provider over clients.
func New(opts Options, clients *Clients) *Cloud {
	opts = opts.WithDefaults()
	c := &Cloud{opts: opts, clients: clients}
	c.catalog = newCatalog(opts, clients)
	c.templates = newLaunchTemplates(opts, clients)
	return c
}

// ReadNoticesFrom makes q the queue Notices returns. The operator opens it at start-up
// (OpenInterruptionQueue) when --interruption-queue is set.
func (c *Cloud) ReadNoticesFrom(q *InterruptionQueue) { c.notices = q }

// Notices is the interruption queue, or nil when none is configured: EC2's notices then
// reach Stratos only as the instance state changes its polling sees.
func (c *Cloud) Notices() cloudprovider.NoticeQueue {
	if c.notices == nil {
		// A nil *InterruptionQueue in the interface would not compare equal to nil.
		return nil
	}
	return c.notices
}

// Name is aws.
func (c *Cloud) Name() string { return ProviderName }

// Start runs the background refresh of the catalog and the garbage collection of unused
// launch templates until ctx ends. The manager runs it on the leader only.
func (c *Cloud) Start(ctx context.Context) error {
	go c.templates.collectEvery(ctx, c.opts.Clock, c.opts.LaunchTemplateTTL)
	return c.catalog.run(ctx)
}
