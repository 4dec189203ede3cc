package aws

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// TagNodeClass names, on an instance profile Stratos made, the AWSNodeClass it is for.
const TagNodeClass = v1alpha1.Group + "/awsnodeclass"

// maxInstanceProfileName is IAM's limit on the length of an instance profile's name.
const maxInstanceProfileName = 128

// notIAMName matches the characters IAM does not allow in names ([\w+=,.@-] it does).
var notIAMName = regexp.MustCompile(`[^\w+=,.@-]`)

// InstanceProfileName is the name of the instance profile Stratos manages for the
// spec.role of an AWSNodeClass: stratos_<cluster>_<hash>, the hash taken of the
// cluster, the region and the class, as IAM names are global to the account while a
// cluster is in one region. At most 128 characters, whatever the cluster's name.
func InstanceProfileName(cluster, region, class string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(cluster + "/" + region + "/" + class))
	suffix := fmt.Sprintf("_%016x", h.Sum64())
	prefix := "stratos_" + notIAMName.ReplaceAllString(cluster, "-")
	if len(prefix)+len(suffix) > maxInstanceProfileName {
		prefix = prefix[:maxInstanceProfileName-len(suffix)]
	}
	return prefix + suffix
}

// InstanceProfilePath is the IAM path of every instance profile Stratos makes for a
// cluster, so that they can be listed without the others of the account.
func InstanceProfilePath(cluster string) string {
	return "/stratos/" + notIAMName.ReplaceAllString(cluster, "-") + "/"
}

// resolveInstanceProfile is spec.instanceProfile, which must exist, or the profile
// Stratos manages for spec.role, made or given the role when needed.
func (r *Resolver) resolveInstanceProfile(ctx context.Context, class *v1alpha1.AWSNodeClass) (string, *Failure) {
	if name := class.Spec.InstanceProfile; name != "" {
		_, err := r.clients.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		switch {
		case isNoSuchEntity(err):
			return "", &Failure{Part: PartInstanceProfile, Reason: ReasonInstanceProfileNotFound, Message: fmt.Sprintf("instance profile %s does not exist", name)}
		case err != nil:
			return "", awsFailure(PartInstanceProfile, "reading instance profile "+name, err)
		}
		return name, nil
	}
	return r.ensureInstanceProfile(ctx, class.Name, class.Spec.Role)
}

// ensureInstanceProfile makes the managed instance profile of a class, tagged with the
// cluster and the class, and gives it role alone: a role the spec no longer names is
// taken off first, as a profile holds one role.
func (r *Resolver) ensureInstanceProfile(ctx context.Context, class, role string) (string, *Failure) {
	name := InstanceProfileName(r.opts.ClusterName, r.clients.Region, class)
	profile, err := r.instanceProfile(ctx, name)
	if err != nil {
		return "", awsFailure(PartInstanceProfile, "reading instance profile "+name, err)
	}
	if profile == nil {
		out, err := r.clients.IAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
			InstanceProfileName: aws.String(name),
			Path:                aws.String(InstanceProfilePath(r.opts.ClusterName)),
			Tags:                r.instanceProfileTags(class),
		})
		if err != nil {
			return "", iamFailure("creating instance profile "+name, err)
		}
		profile = out.InstanceProfile
	} else if owner := tagValue(profile.Tags, TagNodeClass); owner != class || tagValue(profile.Tags, v1alpha1.TagCluster) != r.opts.ClusterName {
		return "", &Failure{Part: PartInstanceProfile, Reason: ReasonInstanceProfileError,
			Message: fmt.Sprintf("instance profile %s exists and is not the one Stratos made for this class in cluster %s", name, r.opts.ClusterName)}
	}
	has := false
	for _, current := range profile.Roles {
		if aws.ToString(current.RoleName) == role {
			has = true
			continue
		}
		if _, err := r.clients.IAM.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: current.RoleName}); err != nil && !isNoSuchEntity(err) {
			return "", iamFailure(fmt.Sprintf("taking role %s off instance profile %s", aws.ToString(current.RoleName), name), err)
		}
	}
	if !has {
		_, err := r.clients.IAM.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String(role)})
		if isNoSuchEntity(err) {
			return "", &Failure{Part: PartInstanceProfile, Reason: ReasonRoleNotFound,
				Message: fmt.Sprintf("adding role %s to instance profile %s: %s", role, name, errorMessage(err))}
		}
		if err != nil {
			return "", iamFailure(fmt.Sprintf("adding role %s to instance profile %s", role, name), err)
		}
	}
	return name, nil
}

// instanceProfileTags mark a managed profile as the cluster's, for the class.
func (r *Resolver) instanceProfileTags(class string) []iamtypes.Tag {
	return []iamtypes.Tag{
		{Key: aws.String(v1alpha1.TagCluster), Value: aws.String(r.opts.ClusterName)},
		{Key: aws.String(TagNodeClass), Value: aws.String(class)},
		{Key: aws.String("kubernetes.io/cluster/" + r.opts.ClusterName), Value: aws.String("owned")},
	}
}

// DeleteInstanceProfile removes the instance profile Stratos made for class, if there
// is one: its role is taken off, then the profile deleted. A profile of that name that
// is not the one Stratos made for the class is left alone.
func (r *Resolver) DeleteInstanceProfile(ctx context.Context, class string) error {
	name := InstanceProfileName(r.opts.ClusterName, r.clients.Region, class)
	profile, err := r.instanceProfile(ctx, name)
	if err != nil || profile == nil {
		return err
	}
	if tagValue(profile.Tags, TagNodeClass) != class || tagValue(profile.Tags, v1alpha1.TagCluster) != r.opts.ClusterName {
		return nil
	}
	return r.deleteInstanceProfile(ctx, profile)
}

// SweepInstanceProfiles removes the instance profiles Stratos made for this cluster
// whose class keep does not want kept, such as those of classes deleted while their
// finalizer was taken off by hand, and returns their names. IAM lists profiles without
// their tags, so each profile under the cluster's path is read once.
func (r *Resolver) SweepInstanceProfiles(ctx context.Context, keep func(class string) bool) ([]string, error) {
	path := InstanceProfilePath(r.opts.ClusterName)
	var removed []string
	pages := iam.NewListInstanceProfilesPaginator(r.clients.IAM, &iam.ListInstanceProfilesInput{PathPrefix: aws.String(path)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return removed, fmt.Errorf("listing instance profiles under %s: %w", path, err)
		}
		for _, listed := range page.InstanceProfiles {
			// The path prefix is matched again: not every IAM endpoint filters by it.
			if aws.ToString(listed.Path) != path {
				continue
			}
			profile, err := r.instanceProfile(ctx, aws.ToString(listed.InstanceProfileName))
			if err != nil {
				return removed, fmt.Errorf("reading instance profile %s: %w", aws.ToString(listed.InstanceProfileName), err)
			}
			if profile == nil || tagValue(profile.Tags, v1alpha1.TagCluster) != r.opts.ClusterName {
				continue
			}
			class := tagValue(profile.Tags, TagNodeClass)
			if class == "" || keep(class) {
				continue
			}
			if err := r.deleteInstanceProfile(ctx, profile); err != nil {
				return removed, err
			}
			removed = append(removed, aws.ToString(profile.InstanceProfileName))
		}
	}
	return removed, nil
}

// instanceProfile reads a profile, or returns nil when it does not exist.
func (r *Resolver) instanceProfile(ctx context.Context, name string) (*iamtypes.InstanceProfile, error) {
	out, err := r.clients.IAM.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if isNoSuchEntity(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out.InstanceProfile, nil
}

// deleteInstanceProfile takes every role off profile, which IAM requires, and deletes
// it; what is gone already counts as done.
func (r *Resolver) deleteInstanceProfile(ctx context.Context, profile *iamtypes.InstanceProfile) error {
	for _, role := range profile.Roles {
		if _, err := r.clients.IAM.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: profile.InstanceProfileName, RoleName: role.RoleName}); err != nil && !isNoSuchEntity(err) {
			return fmt.Errorf("taking role %s off instance profile %s: %w", aws.ToString(role.RoleName), aws.ToString(profile.InstanceProfileName), err)
		}
	}
	if _, err := r.clients.IAM.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: profile.InstanceProfileName}); err != nil && !isNoSuchEntity(err) {
		return fmt.Errorf("deleting instance profile %s: %w", aws.ToString(profile.InstanceProfileName), err)
	}
	return nil
}

// iamFailure is the failure of an IAM call that changes the managed profile: one IAM
// refused for the class's sake (a quota, a conflict) is InstanceProfileError, other
// AWS errors are AWSError.
func iamFailure(what string, err error) *Failure {
	f := awsFailure(PartInstanceProfile, what, err)
	switch errorCode(err) {
	case "LimitExceeded", "EntityAlreadyExists", "DeleteConflict", "InvalidInput", "MalformedPolicyDocument":
		f.Reason = ReasonInstanceProfileError
	}
	return f
}

func isNoSuchEntity(err error) bool { return err != nil && errorCode(err) == "NoSuchEntity" }

// tagValue is the value of key among tags, or "".
func tagValue(tags []iamtypes.Tag, key string) string {
	for _, t := range tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value)
		}
	}
	return ""
}
