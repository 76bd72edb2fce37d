// The messages that carry runs into the dashboard (SnapshotMsg, BatchMsg, …) and those components send the
// root (PlanMsg, AppliedMsg, PagerMsg).

package app

import (
	"time"

	"runwatch/model"
)

// Health mirrors watch.Health, so the ui can be built and tested without a watcher.
type Health struct {
	Mode       string // "inotify", "polling 2s", "mixed"
	Err        string
	LastChange time.Time
	Watches    int
	Loading    int // runs found and not read yet: they arrive in later batches
}

// LogAppend mirrors watch.LogAppend: new entries of one log, and whether it was truncated or rotated.
type LogAppend struct {
	Path               string
	Entries            []model.LogEntry
	Truncated, Rotated bool
}

// SnapshotMsg carries the initial runs.
type SnapshotMsg struct {
	Runs   []model.Run
	Health Health
	At     time.Time
}

// BatchMsg is one batch of changes (watch.Update-shaped). The dashboard redraws once per batch, never per
// file event.
type BatchMsg struct {
	// Changed are shared with the watcher: never changed in place (App.Runs keeps them as they are).
	Changed []*model.Run
	Removed []string // Run.Key values (the StatePath of a local run)
	// Hosts is every remote host's health, on batches from remote roots (nil on local batches).
	Hosts    []model.HostHealth
	Appended []LogAppend
	Health   Health
	At       time.Time
}

// ErrorMsg puts one line in the footer (e.g. the watcher stopped).
type ErrorMsg struct{ Err error }

// WatcherStoppedMsg says no more batches will come: the footer stops claiming the data is live.
type WatcherStoppedMsg struct{}

type TickMsg time.Time

type PlanMsg struct {
	Req     ActionRequest
	Planned Planned
	Err     error
}

type AppliedMsg struct {
	Summary string
	Err     error
	// Run is the key of the run the action was on ("" for a launch or an install).
	Run string
}

// PagerMsg opens a pager overlay: a resume brief, a message read whole, a timeline entry (enter), how to
// set a resume command. pattern, when set, is searched at once (an entry opened from a search).
type PagerMsg struct {
	Title, Text string
	Copyable    bool
	Pattern     string
	Regex       bool
	Note        string // set instead of text: nothing to open, and why
}
