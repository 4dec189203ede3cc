package aws

import (
	"context"
	"errors"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func (c *Cloud) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	return nil, errors.New("not implemented")
}

func (c *Cloud) ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error) {
	return nil, errors.New("not implemented")
}
