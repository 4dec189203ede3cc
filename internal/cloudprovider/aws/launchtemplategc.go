package aws

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Launch templates count against EC2's quota per region (5,000), and a change of a
// pool's labels, taints or node class makes a new one. The leader deletes the cluster's
// templates that no launch of its own used for Options.LaunchTemplateTTL and that are at
// least as old. Instances do not need their template once launched, and a stopped one
// starts without it; a launch whose template is deleted meanwhile fails retryably and
// the next makes the template again. After a restart no template counts as used: those
// the pools still need are made again by their next launch, one call each.

// used records that a launch used the template called name at now.
func (t *launchTemplates) used(name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastUsed[name] = now
}

// collect deletes the cluster's launch templates that no launch used for ttl and that
// were made at least ttl ago, and returns their names.
func (t *launchTemplates) collect(ctx context.Context, now time.Time, ttl time.Duration) ([]string, error) {
	pages := ec2.NewDescribeLaunchTemplatesPaginator(t.ec2, &ec2.DescribeLaunchTemplatesInput{
		Filters: tagFilters(map[string]string{v1beta1.TagCluster: t.cluster}),
	})
	var stale []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, lt := range page.LaunchTemplates {
			name := aws.ToString(lt.LaunchTemplateName)
			t.mu.Lock()
			lastUsed, used := t.lastUsed[name]
			t.mu.Unlock()
			if (used && now.Sub(lastUsed) < ttl) || now.Sub(aws.ToTime(lt.CreateTime)) < ttl {
				continue
			}
			stale = append(stale, name)
		}
	}
	var deleted []string
	for _, name := range stale {
		_, err := t.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
		if err != nil && !isTemplateNotFound(awsErrorCode(err)) {
			return deleted, err
		}
		t.mu.Lock()
		delete(t.known, name)
		delete(t.lastUsed, name)
		t.mu.Unlock()
		deleted = append(deleted, name)
	}
	return deleted, nil
}

// collectEvery collects the stale launch templates every ttl until ctx ends.
func (t *launchTemplates) collectEvery(ctx context.Context, clk clock.Clock, ttl time.Duration) {
	logger := log.FromContext(ctx).WithName("aws-launch-templates")
	for {
		select {
		case <-ctx.Done():
			return
		case <-clk.After(ttl):
		}
		deleted, err := t.collect(ctx, clk.Now(), ttl)
		if len(deleted) > 0 {
			logger.Info("Deleted launch templates no launch used lately", "templates", deleted, "unusedFor", ttl)
		}
		if err != nil && ctx.Err() == nil {
			logger.Error(err, "Collecting unused launch templates; trying again later")
		}
	}
}
