package aws

import (
	"context"
	"errors"
)

func (c *Cloud) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return nil, errors.New("not implemented")
}

func (c *Cloud) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	return nil, errors.New("not implemented")
}

func (c *Cloud) TerminateInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return nil, errors.New("not implemented")
}
