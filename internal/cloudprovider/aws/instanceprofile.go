package aws

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// TagNodeClass names, on an instance profile Stratos made, the EC2NodeClass it is for.
const TagNodeClass = v1beta1.Group + "/ec2nodeclass"

// maxInstanceProfileName is IAM's limit on the length of an instance profile's name.
const maxInstanceProfileName = 128

// notIAMName matches the characters IAM does not allow in names ([\w+=,.@-] it does).
var notIAMName = regexp.MustCompile(`[^\w+=,.@-]`)

// InstanceProfileName is the name of the instance profile Stratos manages for one
// spec.role of an EC2NodeClass: stratos_<cluster>_<hash>, the hash taken of the
// cluster, the region, the class and the role, as IAM names are global to the account
// while a cluster is in one region. Each role gets a profile of its own, so that a
// change of role never touches the profile running nodes hold: they keep theirs until
// drift replaces them. At most 128 characters, whatever the cluster's name.
func InstanceProfileName(cluster, region, class, role string) string {
	return profileName(cluster, cluster+"/"+region+"/"+class+"/"+role)
}

// legacyInstanceProfileName is the name of the one profile per class that Stratos made
// before each role had its own, and changed the role of in place. A class made then
// keeps it for the nodes launched with it until they are gone.
func legacyInstanceProfileName(cluster, region, class string) string {
	return profileName(cluster, cluster+"/"+region+"/"+class)
}

func profileName(cluster, hashed string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(hashed))
	suffix := fmt.Sprintf("_%016x", h.Sum64())
	prefix := "stratos_" + notIAMName.ReplaceAllString(cluster, "-")
	if len(prefix)+len(suffix) > maxInstanceProfileName {
		prefix = prefix[:maxInstanceProfileName-len(suffix)]
	}
	return prefix + suffix
}

// InstanceProfilePath is the IAM path under which Stratos makes every instance profile
// of a cluster, so that they can be listed without the others of the account.
func InstanceProfilePath(cluster string) string {
	return "/stratos/" + notIAMName.ReplaceAllString(cluster, "-") + "/"
}

// InstanceProfileClassPath is the IAM path of the profiles of one class, under the
// cluster's: listing the cluster's profiles tells a class's apart without reading each.
// Class names are DNS subdomains, which IAM paths allow as they are.
func InstanceProfileClassPath(cluster, class string) string {
	return InstanceProfilePath(cluster) + class + "/"
}

// resolveInstanceProfile is spec.instanceProfile, which must exist, or the profile
// Stratos manages for spec.role, made or given the role when needed.
func (r *Resolver) resolveInstanceProfile(ctx context.Context, class *v1beta1.EC2NodeClass) (string, *Failure) {
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

// ensureInstanceProfile makes the managed instance profile of a class's role, tagged
// with the cluster and the class, and puts the role in it. It never takes a role off a
// profile: nodes may hold it. A profile of that name holding another role was changed
// outside Stratos and is refused, not repaired.
func (r *Resolver) ensureInstanceProfile(ctx context.Context, class, role string) (string, *Failure) {
	name := InstanceProfileName(r.opts.ClusterName, r.clients.Region, class, role)
	profile, err := r.instanceProfile(ctx, name)
	if err != nil {
		return "", awsFailure(PartInstanceProfile, "reading instance profile "+name, err)
	}
	if profile == nil {
		out, err := r.clients.IAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
			InstanceProfileName: aws.String(name),
			Path:                aws.String(InstanceProfileClassPath(r.opts.ClusterName, class)),
			Tags:                r.instanceProfileTags(class),
		})
		if err != nil {
			return "", iamFailure("creating instance profile "+name, err)
		}
		profile = out.InstanceProfile
	} else if !r.madeFor(profile, class) {
		return "", &Failure{Part: PartInstanceProfile, Reason: ReasonInstanceProfileError,
			Message: fmt.Sprintf("instance profile %s exists and is not the one Stratos made for this class in cluster %s", name, r.opts.ClusterName)}
	}
	for _, held := range profile.Roles {
		if aws.ToString(held.RoleName) != role {
			return "", &Failure{Part: PartInstanceProfile, Reason: ReasonInstanceProfileError,
				Message: fmt.Sprintf("instance profile %s holds role %s, not %s: it was changed outside Stratos", name, aws.ToString(held.RoleName), role)}
		}
	}
	if len(profile.Roles) > 0 {
		return name, nil
	}
	_, err = r.clients.IAM.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String(role)})
	switch {
	case isNoSuchEntity(err):
		return "", &Failure{Part: PartInstanceProfile, Reason: ReasonRoleNotFound,
			Message: fmt.Sprintf("role %s does not exist (adding it to instance profile %s: %s); the nodes keep the instance profile they have", role, name, errorMessage(err))}
	case errorCode(err) == "AccessDenied":
		f := awsFailure(PartInstanceProfile, fmt.Sprintf("adding role %s to instance profile %s", role, name), err)
		f.Message += fmt.Sprintf("; grant iam:PassRole on role %s in the controller's IAM policy (docs/aws.md); the nodes keep the instance profile they have", role)
		return "", f
	case err != nil:
		return "", iamFailure(fmt.Sprintf("adding role %s to instance profile %s", role, name), err)
	}
	return name, nil
}

// madeFor reports whether profile carries the tags Stratos puts on the profiles it
// makes for class in this cluster.
func (r *Resolver) madeFor(profile *iamtypes.InstanceProfile, class string) bool {
	return tagValue(profile.Tags, TagNodeClass) == class && tagValue(profile.Tags, v1beta1.TagCluster) == r.opts.ClusterName
}

// instanceProfileTags mark a managed profile as the cluster's, for the class.
func (r *Resolver) instanceProfileTags(class string) []iamtypes.Tag {
	return []iamtypes.Tag{
		{Key: aws.String(v1beta1.TagCluster), Value: aws.String(r.opts.ClusterName)},
		{Key: aws.String(TagNodeClass), Value: aws.String(class)},
		{Key: aws.String("kubernetes.io/cluster/" + r.opts.ClusterName), Value: aws.String("owned")},
	}
}

// DeleteInstanceProfile removes every instance profile Stratos made for class, of any
// role: its roles are taken off, then the profile deleted. A profile of such a name
// that is not the one Stratos made for the class is left alone.
func (r *Resolver) DeleteInstanceProfile(ctx context.Context, class string) error {
	_, err := r.RetireInstanceProfiles(ctx, class, func(string) bool { return false })
	return err
}

// RetireInstanceProfiles removes the instance profiles Stratos made for class that
// keep does not want kept (the class's current profile, and those a claim's instance
// was launched with), and returns their names. They are the profiles under the class's
// path, and the one profile per class Stratos made before each role had its own.
func (r *Resolver) RetireInstanceProfiles(ctx context.Context, class string, keep func(name string) bool) ([]string, error) {
	classPath := InstanceProfileClassPath(r.opts.ClusterName, class)
	legacy := legacyInstanceProfileName(r.opts.ClusterName, r.clients.Region, class)
	var removed []string
	err := r.listInstanceProfiles(ctx, func(listed iamtypes.InstanceProfile) error {
		name := aws.ToString(listed.InstanceProfileName)
		path := aws.ToString(listed.Path)
		ofClass := path == classPath || (path == InstanceProfilePath(r.opts.ClusterName) && name == legacy)
		if !ofClass || keep(name) {
			return nil
		}
		profile, err := r.instanceProfile(ctx, name)
		if err != nil {
			return fmt.Errorf("reading instance profile %s: %w", name, err)
		}
		if profile == nil || !r.madeFor(profile, class) {
			return nil
		}
		if err := r.deleteInstanceProfile(ctx, profile); err != nil {
			return err
		}
		removed = append(removed, name)
		return nil
	})
	return removed, err
}

// SweepInstanceProfiles removes the instance profiles Stratos made for this cluster
// whose class keep does not want kept, such as those of classes deleted while their
// finalizer was taken off by hand, and returns their names. IAM lists profiles without
// their tags, so each profile under the cluster's path is read once.
func (r *Resolver) SweepInstanceProfiles(ctx context.Context, keep func(class string) bool) ([]string, error) {
	var removed []string
	err := r.listInstanceProfiles(ctx, func(listed iamtypes.InstanceProfile) error {
		profile, err := r.instanceProfile(ctx, aws.ToString(listed.InstanceProfileName))
		if err != nil {
			return fmt.Errorf("reading instance profile %s: %w", aws.ToString(listed.InstanceProfileName), err)
		}
		if profile == nil || tagValue(profile.Tags, v1beta1.TagCluster) != r.opts.ClusterName {
			return nil
		}
		class := tagValue(profile.Tags, TagNodeClass)
		if class == "" || keep(class) {
			return nil
		}
		if err := r.deleteInstanceProfile(ctx, profile); err != nil {
			return err
		}
		removed = append(removed, aws.ToString(profile.InstanceProfileName))
		return nil
	})
	return removed, err
}

// listInstanceProfiles calls each for every instance profile under the cluster's path
// (its classes' paths included), page by page, until each fails.
func (r *Resolver) listInstanceProfiles(ctx context.Context, each func(iamtypes.InstanceProfile) error) error {
	path := InstanceProfilePath(r.opts.ClusterName)
	pages := iam.NewListInstanceProfilesPaginator(r.clients.IAM, &iam.ListInstanceProfilesInput{PathPrefix: aws.String(path)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing instance profiles under %s: %w", path, err)
		}
		for _, listed := range page.InstanceProfiles {
			// The path prefix is matched again: not every IAM endpoint filters by it.
			if !strings.HasPrefix(aws.ToString(listed.Path), path) {
				continue
			}
			if err := each(listed); err != nil {
				return err
			}
		}
	}
	return nil
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
