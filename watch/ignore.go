package watch

import (
	"strings"

	"runwatch/state/atomicfile"
)

// scratchName reports whether a file name is a temporary or editor scratch file. Such files never carry run
// state themselves: the real change arrives as the rename onto the real name, so reacting to the scratch file
// would only cost a re-read of a half-written state.
func scratchName(name string) bool {
	switch {
	case name == "4913": // vim probes directory writability with this name
		return true
	case strings.HasSuffix(name, "~"), // editor backups
		strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swx"), strings.HasSuffix(name, ".swo"),
		strings.HasSuffix(name, ".tmp"): // the resumable writer's state.env.tmp
		return true
	case atomicfile.IsTemp(name): // runwatch's own .name.tmp-*
		return true
	case strings.HasPrefix(name, ".") && strings.Contains(name, ".claimed-"): // a lock being cleared by runwatch
		return true
	case strings.HasPrefix(name, ".#"), strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"): // emacs
		return true
	case strings.HasSuffix(name, "___jb_tmp___"), strings.HasSuffix(name, "___jb_old___"), // JetBrains safe write
		strings.HasSuffix(name, ".kate-swp"):
		return true
	}
	return false
}
