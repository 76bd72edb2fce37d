// The run.log index (state/runlog) as the timeline's LogSource.

package ui

import (
	"runwatch/state/runlog"
	"runwatch/ui/app"
)

// OpenIndexedLog opens a run.log for the timeline through runlog.Index: the tail is indexed at open and
// the head counted in the background, so a 1 GiB log opens as fast as a small one, memory stays bounded
// (sparse line marks, only the visible lines read), and search covers the whole file.
func OpenIndexedLog(path string) (app.LogSource, error) {
	x, err := runlog.OpenIndex(path)
	if err != nil {
		return nil, err
	}
	return x, nil
}
