package api_test

import (
	"fmt"
	"testing"
)

// EC2NodeClasses the API server must accept: amiFamily unset or agreeing with an alias,
// and any of the three families for images selected by ID, name or tags.
var validAMIFamilies = []struct{ name, patch string }{
	{"alias, amiFamily unset", `spec: {amiSelectorTerms: [{alias: bottlerocket@v1.40.0}]}`},
	{"AL2023 alias, amiFamily AL2023", `spec: {amiFamily: AL2023, amiSelectorTerms: [{alias: al2023@v20250601}]}`},
	{"Bottlerocket alias, amiFamily Bottlerocket", `spec: {amiFamily: Bottlerocket, amiSelectorTerms: [{alias: bottlerocket@latest}]}`},
	{"image by ID, amiFamily unset", `spec: {amiSelectorTerms: [{id: ami-0123456789abcdef0}]}`},
	{"image by ID declared Bottlerocket", `spec: {amiFamily: Bottlerocket, amiSelectorTerms: [{id: ami-0123456789abcdef0}]}`},
	{"images by name declared AL2023", `spec: {amiFamily: AL2023, amiSelectorTerms: [{name: my-node-*, owner: self}]}`},
	{"images by tags declared Custom", `spec: {amiFamily: Custom, amiSelectorTerms: [{tags: {team: a}}, {id: ami-0123456789abcdef0}]}`},
}

func TestAMIFamiliesTheAPIAccepts(t *testing.T) {
	for i, tc := range validAMIFamilies {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			obj := patched(t, baseAWSClass, tc.patch, fmt.Sprintf("ami-family-%d", i))
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("the API server refused %s: %v", tc.patch, err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
		})
	}
}
