package aws

import (
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A cluster name as long as EKS allows (100 characters) still gives launch template names
// EC2 accepts (at most 128), and two such clusters sharing all but their last characters
// still get different names, since their nodes' user data names each cluster.
func TestLaunchTemplateNamesFitEC2ForTheLongestClusterNames(t *testing.T) {
	class := &v1beta1.EC2NodeClass{}
	nameFor := func(cluster string) string {
		t.Helper()
		lt := &launchTemplates{cluster: cluster}
		tmpl, err := lt.templateFor(class, "cluster: "+cluster)
		if err != nil {
			t.Fatal(err)
		}
		return tmpl.name
	}
	long := strings.Repeat("a", 99)
	first, second := nameFor(long+"1"), nameFor(long+"2")
	for _, name := range []string{first, second} {
		if len(name) > maxLaunchTemplateName {
			t.Errorf("launch template name %q has %d characters, over EC2's %d", name, len(name), maxLaunchTemplateName)
		}
		if !strings.HasPrefix(name, "stratos/aaaa") {
			t.Errorf("launch template name %q does not start with stratos/ and the cluster", name)
		}
	}
	if first == second {
		t.Errorf("two clusters got the same launch template name %q", first)
	}
	if short := nameFor("prod"); !strings.HasPrefix(short, "stratos/prod/") || len(short) != len("stratos/prod/")+20 {
		t.Errorf("a short cluster name is kept whole: got %q", short)
	}
}
