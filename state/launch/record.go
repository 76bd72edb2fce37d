package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"runwatch/state/journal"
)

// Launched is what a launch in tmux did: the pane it opened for the run, on which tmux server. `runwatch
// goto` and the dashboard's go-to key find the run's agent there while the pane's process lives.
type Launched struct {
	StatePath string    `json:"state_path"`
	Socket    string    `json:"socket"`
	PaneID    string    `json:"pane_id"`
	PanePID   int       `json:"pane_pid"`
	At        time.Time `json:"at"`
}

// LaunchesFile is the record of launches beside the journal at journalPath: one JSON object a line.
func LaunchesFile(journalPath string) string {
	return filepath.Join(filepath.Dir(journalPath), "launches.jsonl")
}

// DefaultLaunches is LaunchesFile beside the default journal of the environment getenv reads ("" when there is
// no home to keep it in).
func DefaultLaunches(getenv func(string) string) string {
	p, err := journal.DefaultPath(getenv)
	if err != nil {
		return ""
	}
	return LaunchesFile(p)
}

// Remember appends l to the record at path: one short line in one write, private to the user.
func Remember(path string, l Launched) error {
	line, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("record of launches: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record of launches: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("record of launches %s: %w", path, err)
	}
	return nil
}

// maxLaunchesRead bounds what is read of the record: its end, where the recent launches are.
const maxLaunchesRead = 1 << 20

// LastLaunch is the last launch recorded at path for the run whose state file is statePath.
func LastLaunch(path, statePath string) (Launched, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Launched{}, false
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxLaunchesRead {
		if _, err := f.Seek(-maxLaunchesRead, io.SeekEnd); err != nil {
			return Launched{}, false
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLaunchesRead))
	if err != nil && !errors.Is(err, io.EOF) {
		return Launched{}, false
	}
	var last Launched
	found := false
	for _, line := range strings.Split(string(data), "\n") {
		var l Launched
		// A line cut by the seek, or by a crash, does not parse and is skipped.
		if json.Unmarshal([]byte(line), &l) == nil && l.StatePath == statePath && l.PaneID != "" {
			last, found = l, true
		}
	}
	return last, found
}
