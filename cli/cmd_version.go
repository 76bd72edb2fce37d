package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register(command{
		name:    "version",
		summary: "print runwatch's version: module version, VCS revision and time when built from a checkout, Go version",
		about:   "The same as 'runwatch --version'. Everything printed comes from the build information Go embeds in the binary.",
		examples: []example{
			{"which runwatch is this", "runwatch version"},
		},
		define: func(*flagSet) runFunc { return runVersion },
	})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return usageError(stderr, "version", "takes no arguments, got %q", args)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(stdout, "runwatch (no build information)\ngo        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK
	}
	io.WriteString(stdout, versionText(info, runtime.GOOS+"/"+runtime.GOARCH))
	return exitOK
}

// versionText is what `runwatch version` prints for info: the module version ("(devel)" for a plain
// `go build`), the VCS revision and commit time with "(modified)" for a dirty checkout, and the Go version.
func versionText(info *debug.BuildInfo, platform string) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	out := "runwatch " + version + "\n"
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		out += "revision  " + rev + "\n"
	}
	if t := settings["vcs.time"]; t != "" {
		out += "time      " + t + "\n"
	}
	out += "go        " + info.GoVersion + " " + platform + "\n"
	return out
}
