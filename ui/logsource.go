package ui

import (
	"time"

	"runwatch/model"
	"runwatch/state/runlog"
)

// Bounds of a tail-backed timeline. The tail read is bounded by runlog.ReadTail (it reads backwards only
// until it has enough entries), so opening a 1 GiB log costs what opening a small one does; lines that
// follow while the dashboard is open are kept up to maxTailLines, dropping the oldest in blocks.
const (
	tailEntries  = 5000
	maxTailLines = 50000
)

// OpenTailLog opens the last entries of a run.log and follows it from there by byte offset with its own
// runlog.Follower, so what the timeline shows joins up exactly with what it read first.
func OpenTailLog(path string) (LogSource, error) {
	entries, size, err := runlog.ReadTail(path, tailEntries)
	if err != nil {
		return nil, err
	}
	s := &tailSource{follower: runlog.NewFollower(path, size)}
	s.add(entries)
	return s, nil
}

// OpenIndexedLog is the LogSource the program uses for run.log timelines.
var OpenIndexedLog OpenLogFunc = OpenTailLog

type tailSource struct {
	memSource
	follower *runlog.Follower
	dropped  int // lines dropped from the front to stay within maxTailLines
}

func (s *tailSource) add(entries []model.LogEntry) {
	for _, e := range entries {
		if e.HasTime {
			s.lines = append(s.lines, "["+e.Time.UTC().Format(time.RFC3339)+"] "+e.Message)
		} else {
			// A timeless entry continues the entry above it (it arrived in a later poll).
			s.lines = append(s.lines, e.Message)
		}
		s.lines = append(s.lines, e.Continuation...)
	}
	if over := len(s.lines) - maxTailLines; over > 0 {
		// Drop a block, not a line per append, so the copy happens rarely.
		cut := over + maxTailLines/10
		s.lines = append(s.lines[:0:0], s.lines[cut:]...)
		s.dropped += cut
	}
}

// Refresh reads what was appended since the last read; the Follower caps one read, so a huge burst is
// taken in several refreshes rather than stalling a frame.
func (s *tailSource) Refresh() (bool, error) {
	entries, truncated, _, err := s.follower.Poll()
	if truncated {
		s.lines, s.dropped = nil, 0
	}
	s.add(entries)
	return truncated, err
}

func (s *tailSource) Close() error { return s.follower.Close() }

// Dropped counts lines dropped from the front, so the timeline can keep its cursor on the same line.
func (s *tailSource) Dropped() int { return s.dropped }

// More reports that the last Refresh stopped before the end of the file.
func (s *tailSource) More() bool { return s.follower.More() }
