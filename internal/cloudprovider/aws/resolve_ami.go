package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Image families: how an image joins the cluster.
const (
	FamilyAL2023       = "al2023"
	FamilyBottlerocket = "bottlerocket"
	// FamilyCustom is an image selected by ID, name or tags whose spec.amiFamily is
	// Custom or unset.
	FamilyCustom = "custom"
)

// aliasLatest is the version of an alias that follows the newest published image.
const aliasLatest = "latest"

// ec2Architectures are the EC2 architectures Stratos launches, with their Kubernetes
// names. Images of any other architecture (i386, the macOS ones) never resolve.
var ec2Architectures = map[string]string{"x86_64": "amd64", "arm64": "arm64"}

// aliasParameters returns the image family of an alias (al2023@latest,
// bottlerocket@v1.30.0) and the SSM parameters that publish its images, by EC2
// architecture, under root (/aws/service on AWS) for a Kubernetes version:
//
//	al2023@latest  <root>/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/standard/recommended/image_id
//	al2023@vDATE   <root>/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/standard/amazon-eks-node-al2023-<arch>-standard-<k8s>-vDATE/image_id
//	bottlerocket@latest  <root>/bottlerocket/aws-k8s-<k8s>/<arch>/latest/image_id
//	bottlerocket@vX.Y.Z  <root>/bottlerocket/aws-k8s-<k8s>/<arch>/X.Y.Z/image_id
//
// as the EKS user guide ("Retrieve recommended Amazon Linux AMI IDs", "... Bottlerocket
// AMI IDs") publishes them; Bottlerocket's versions carry no v in the path.
func aliasParameters(root, kubernetesVersion, alias string) (string, map[string]string, error) {
	family, version, ok := strings.Cut(alias, "@")
	if !ok || version == "" {
		return "", nil, fmt.Errorf("alias %q is not family@version", alias)
	}
	params := map[string]string{}
	for arch := range ec2Architectures {
		switch family {
		case FamilyAL2023:
			name := "recommended"
			if version != aliasLatest {
				name = fmt.Sprintf("amazon-eks-node-al2023-%s-standard-%s-%s", arch, kubernetesVersion, version)
			}
			params[arch] = fmt.Sprintf("%s/eks/optimized-ami/%s/amazon-linux-2023/%s/standard/%s/image_id", root, kubernetesVersion, arch, name)
		case FamilyBottlerocket:
			params[arch] = fmt.Sprintf("%s/bottlerocket/aws-k8s-%s/%s/%s/image_id", root, kubernetesVersion, arch, strings.TrimPrefix(version, "v"))
		default:
			return "", nil, fmt.Errorf("alias %q names no image family Stratos knows (al2023, bottlerocket)", alias)
		}
	}
	return family, params, nil
}

// resolveAMIs resolves the AMI selector terms to the newest available image per
// architecture: through the SSM parameters of an alias, or among the images the ID,
// name and tag terms match together. The images' family is the alias's, else what
// amiFamily (spec.amiFamily) declares.
func (r *Resolver) resolveAMIs(ctx context.Context, terms []v1beta1.AMISelectorTerm, amiFamily string) ([]v1beta1.ResolvedAMI, *Failure) {
	if len(terms) == 1 && terms[0].Alias != "" {
		if _, err := aliasFamily(terms[0].Alias, amiFamily); err != nil {
			return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound, Message: err.Error()}
		}
		return r.resolveAlias(ctx, terms[0].Alias)
	}
	family, err := familyOfAMIFamily(amiFamily)
	if err != nil {
		return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound, Message: err.Error()}
	}
	var images []ec2types.Image
	var ids []string
	for _, term := range terms {
		switch {
		case term.Alias != "":
			// The API allows an alias only as the only term; say so rather than ignore it.
			return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound, Message: "an AMI alias must be the only AMI selector term"}
		case term.ID != "":
			ids = append(ids, term.ID)
		default:
			found, err := r.describeImages(ctx, imageQuery(term))
			if err != nil {
				return nil, awsFailure(PartAMIs, "describing images", err)
			}
			images = append(images, found...)
		}
	}
	if len(ids) > 0 {
		found, err := r.describeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("image-id", ids...)}})
		if err != nil {
			return nil, awsFailure(PartAMIs, "describing images", err)
		}
		images = append(images, found...)
	}
	amis := newestPerArchitecture(images, family)
	if len(amis) == 0 {
		return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound,
			Message: "no available amd64 or arm64 image matches spec.amiSelectorTerms"}
	}
	return amis, nil
}

// imageQuery describes the images of a name and tags term. Without an owner, the
// caller's own images and Amazon's count.
func imageQuery(term v1beta1.AMISelectorTerm) *ec2.DescribeImagesInput {
	owners := []string{"self", "amazon"}
	if term.Owner != "" {
		owners = []string{term.Owner}
	}
	in := &ec2.DescribeImagesInput{Owners: owners, Filters: tagFilters(term.Tags)}
	if term.Name != "" {
		in.Filters = append(in.Filters, filter("name", term.Name))
	}
	return in
}

// resolveAlias reads the images an alias publishes for each architecture from SSM and
// describes them. An architecture without a parameter is left out; an alias with none
// does not resolve.
func (r *Resolver) resolveAlias(ctx context.Context, alias string) ([]v1beta1.ResolvedAMI, *Failure) {
	if r.opts.KubernetesVersion == "" {
		return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound,
			Message: fmt.Sprintf("alias %s needs the cluster's Kubernetes version, and the operator was given none", alias)}
	}
	family, params, err := aliasParameters(r.opts.SSMParameterRoot, r.opts.KubernetesVersion, alias)
	if err != nil {
		return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound, Message: err.Error()}
	}
	names := slices.Sorted(maps.Values(params))
	out, err := r.clients.SSM.GetParameters(ctx, &ssm.GetParametersInput{Names: names})
	if err != nil {
		return nil, awsFailure(PartAMIs, "reading the SSM parameters of alias "+alias, err)
	}
	var ids []string
	for _, p := range out.Parameters {
		ids = append(ids, aws.ToString(p.Value))
	}
	if len(ids) == 0 {
		return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound,
			Message: fmt.Sprintf("no image is published for %s and Kubernetes %s: SSM has none of %s", alias, r.opts.KubernetesVersion, strings.Join(names, ", "))}
	}
	images, err := r.describeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{filter("image-id", ids...)}})
	if err != nil {
		return nil, awsFailure(PartAMIs, "describing the images of alias "+alias, err)
	}
	amis := newestPerArchitecture(images, family)
	if len(amis) == 0 {
		return nil, &Failure{Part: PartAMIs, Reason: ReasonAMINotFound,
			Message: fmt.Sprintf("the images SSM publishes for %s (%s) are not available", alias, strings.Join(ids, ", "))}
	}
	return amis, nil
}

// describeImages lists the available images in, page by page.
func (r *Resolver) describeImages(ctx context.Context, in *ec2.DescribeImagesInput) ([]ec2types.Image, error) {
	in.Filters = append(in.Filters, filter("state", string(ec2types.ImageStateAvailable)))
	in.MaxResults = aws.Int32(1000)
	var images []ec2types.Image
	pages := ec2.NewDescribeImagesPaginator(r.clients.EC2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		images = append(images, page.Images...)
	}
	return images, nil
}

// newestPerArchitecture picks, for each architecture Stratos launches, the image
// created last (the greater ID on a tie, so that the choice is stable), amd64 first.
func newestPerArchitecture(images []ec2types.Image, family string) []v1beta1.ResolvedAMI {
	newest := map[string]ec2types.Image{}
	for _, image := range images {
		arch, ok := ec2Architectures[string(image.Architecture)]
		if !ok {
			continue
		}
		if best, seen := newest[arch]; !seen || newer(image, best) {
			newest[arch] = image
		}
	}
	var out []v1beta1.ResolvedAMI
	for _, arch := range slices.Sorted(maps.Keys(newest)) {
		image := newest[arch]
		out = append(out, v1beta1.ResolvedAMI{ID: aws.ToString(image.ImageId), Name: aws.ToString(image.Name), Architecture: arch, Family: family})
	}
	return out
}

// newer reports whether image a was created after b; the greater ID wins a tie.
func newer(a, b ec2types.Image) bool {
	ta, tb := creation(a), creation(b)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return aws.ToString(a.ImageId) > aws.ToString(b.ImageId)
}

// creation is when an image was created; EC2 gives an ISO 8601 time. An image whose
// time cannot be read counts as the oldest.
func creation(image ec2types.Image) time.Time {
	t, err := time.Parse(time.RFC3339, aws.ToString(image.CreationDate))
	if err != nil {
		return time.Time{}
	}
	return t
}
