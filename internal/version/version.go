// Package version says which build of Stratos is running.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version and Revision are stamped by hack/build.sh with
// -ldflags "-X github.com/stratos-sh/stratos/internal/version.Version=v0.1.0 -X ….Revision=<commit>".
var (
	Version  = "dev"
	Revision = ""
)

// Info describes the running build.
type Info struct {
	Version   string
	Revision  string
	GoVersion string
}

// Get returns the version, the source revision (stamped, else what the Go toolchain
// recorded from version control, else "unknown") and the Go version.
func Get() Info {
	info := Info{Version: Version, Revision: Revision, GoVersion: runtime.Version()}
	if info.Revision != "" {
		return info
	}
	info.Revision = "unknown"
	if build, ok := debug.ReadBuildInfo(); ok {
		for _, setting := range build.Settings {
			if setting.Key == "vcs.revision" {
				info.Revision = setting.Value
			}
		}
	}
	return info
}

// String is the one-line form printed by --version.
func (i Info) String() string {
	return "stratos " + i.Version + " (revision " + i.Revision + ", " + i.GoVersion + ")"
}
