package version

import (
	"strings"
	"testing"
)

func TestGetReportsTheStampedVersionAndRevision(t *testing.T) {
	defer func(v, r string) { Version, Revision = v, r }(Version, Revision)
	Version, Revision = "v1.2.3", "0123abc"
	info := Get()
	if info.Version != "v1.2.3" || info.Revision != "0123abc" {
		t.Errorf("Get() = %+v, want the stamped version v1.2.3 and revision 0123abc", info)
	}
	if got := info.String(); !strings.HasPrefix(got, "stratos v1.2.3 (revision 0123abc, go") {
		t.Errorf("String() = %q", got)
	}
}

func TestGetWithoutAStampedRevisionStillNamesOne(t *testing.T) {
	defer func(r string) { Revision = r }(Revision)
	Revision = ""
	if info := Get(); info.Revision == "" {
		t.Error("Get() has an empty revision; want the toolchain's vcs.revision or \"unknown\"")
	}
}
