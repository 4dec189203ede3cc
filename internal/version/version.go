// Package version says which build of Stratos is running.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at release time with -ldflags "-X github.com/stratos-sh/stratos/internal/version.Version=v0.1.0".
var Version = "dev"

// Info describes the running build.
type Info struct {
	Version   string
	Revision  string
	GoVersion string
}

// Get returns the version, the source revision when the build recorded it, and the Go version.
func Get() Info {
	info := Info{Version: Version, Revision: "unknown", GoVersion: runtime.Version()}
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
