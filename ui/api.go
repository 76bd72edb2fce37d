// The names package cli has always used from ui, kept here as aliases of the leaf packages they moved to
// (issue 28), so cli's code and the dashboard's one public surface stay as they were.

package ui

import (
	"runwatch/ui/app"
	"runwatch/ui/keys"
	"runwatch/ui/text"
)

// What the dashboard is built with and fed (ui/app): its options, the messages that carry runs in, and the
// interfaces through which it plans actions, reads logs and tells the time.
type (
	Options           = app.Options
	FindAgentFunc     = app.FindAgentFunc
	Pane              = app.Pane
	Health            = app.Health
	LogAppend         = app.LogAppend
	SnapshotMsg       = app.SnapshotMsg
	BatchMsg          = app.BatchMsg
	ErrorMsg          = app.ErrorMsg
	WatcherStoppedMsg = app.WatcherStoppedMsg
	ActionRequest     = app.ActionRequest
	Planned           = app.Planned
	Actor             = app.Actor
	LogSource         = app.LogSource
	OpenLogFunc       = app.OpenLogFunc
	RemoteLogFunc     = app.RemoteLogFunc
	Clock             = app.Clock
	Notifier          = app.Notifier
)

// The panes.
const (
	PaneRuns     = app.PaneRuns
	PaneDetail   = app.PaneDetail
	PaneTimeline = app.PaneTimeline
)

// Keymap: the actions cli names, and the keymap itself (ui/keys).
type (
	KeyMap  = keys.KeyMap
	Binding = keys.Binding
)

const (
	ActBack     = keys.ActBack
	ActBottom   = keys.ActBottom
	ActHelp     = keys.ActHelp
	ActOpen     = keys.ActOpen
	ActTop      = keys.ActTop
	ActBrief    = keys.ActBrief
	ActDown     = keys.ActDown
	ActFilter   = keys.ActFilter
	ActInstall  = keys.ActInstall
	ActLaunch   = keys.ActLaunch
	ActNextPane = keys.ActNextPane
	ActPause    = keys.ActPause
	ActQuit     = keys.ActQuit
	ActRetry    = keys.ActRetry
	ActStep     = keys.ActStep
	ActTick     = keys.ActTick
	ActUndo     = keys.ActUndo
	ActUnlock   = keys.ActUnlock
)

// DefaultKeyMap is keys.DefaultKeyMap.
func DefaultKeyMap(readOnly bool) KeyMap { return keys.DefaultKeyMap(readOnly) }

// NewKeyMap is keys.NewKeyMap.
func NewKeyMap(overrides map[string][]string, readOnly bool) (KeyMap, error) {
	return keys.NewKeyMap(overrides, readOnly)
}

// NewKeyMapAt is keys.NewKeyMapAt.
func NewKeyMapAt(overrides map[string][]string, lines map[string]int, readOnly bool) (KeyMap, error) {
	return keys.NewKeyMapAt(overrides, lines, readOnly)
}

// Text for the terminal (ui/text): every string from a run file passes Sanitize before it is drawn.

// Sanitize is text.Sanitize.
func Sanitize(s string) string { return text.Sanitize(s) }

// SanitizeLines is text.SanitizeLines.
func SanitizeLines(s string) []string { return text.SanitizeLines(s) }

// CutMiddle is text.CutMiddle.
func CutMiddle(s string, w int) string { return text.CutMiddle(s, w) }
