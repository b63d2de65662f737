package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version (go install …@v1.2.3) or the commit is shown.
var version = ""

// buildInfo is this binary's version (from -ldflags, the module version,
// or "devel"), the commit it was built from when known, and whether the
// tree had changes.
func buildInfo() (v, commit string, dirty bool) {
	v = version
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	return v, commit, dirty
}

// versionText is the answer to `herald version`: the version, the commit
// it was built from when known, and the Go version.
func versionText() string {
	v, commit, dirty := buildInfo()
	out := "herald " + v
	if commit != "" {
		out += " (commit " + commit[:min(len(commit), 12)]
		if dirty {
			out += ", modified"
		}
		out += ")"
	}
	return out + " " + runtime.Version()
}

func runVersion(args []string, stdout io.Writer) error {
	cmd := newCommand("version", "herald version", "Prints the version of this binary, the commit it was built from, and its Go version.")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, versionText())
	return err
}
