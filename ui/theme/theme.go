// Package theme holds the dashboard's styles (dark, light, mono) and the bordered box every pane and
// overlay is drawn in. It depends only on model (the statuses it colours) and ui/text.
//
// theme.go: the styles, one Theme per palette.
package theme

import (
	"image/color"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"runwatch/model"
)

// Theme holds every style the dashboard uses. Colour only ever doubles a glyph or a word, so the mono theme
// (and NO_COLOR, which Bubble Tea downsamples to no colour) loses no meaning.
type Theme struct {
	Name string

	Title, Dim, Bold, Selected, SelectedDim lipgloss.Style
	Good, Bad, Warn, Info, Running          lipgloss.Style
	Badge, ReadOnly                         lipgloss.Style
	BorderFocused, BorderBlurred            lipgloss.Style
	DiffAdd, DiffDel, DiffHunk              lipgloss.Style
	Match                                   lipgloss.Style
	// MatchCurrent is the match n/N moved to, in reverse video so it stands out from the others without
	// colour too.
	MatchCurrent lipgloss.Style
}

// NewTheme builds a theme. name is auto, dark, light or mono; dark tells auto which background the terminal
// reported (tea.BackgroundColorMsg), and is ignored otherwise.
func NewTheme(name string, dark bool) Theme {
	switch name {
	case "mono":
		return monoTheme()
	case "light":
		dark = false
	case "dark":
		dark = true
	default:
		name = "auto"
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkc)) }
	fg := func(light, darkc string) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(light, darkc)) }
	t := Theme{Name: name}
	t.Title = lipgloss.NewStyle().Bold(true).Foreground(c("#1d4ed8", "#93c5fd"))
	t.Dim = fg("#6b7280", "#8b949e")
	t.Bold = lipgloss.NewStyle().Bold(true)
	// Explicit colours rather than reverse video: some renderers (freeze, a few terminals) ignore reverse.
	t.Selected = lipgloss.NewStyle().Bold(true).Foreground(c("#ffffff", "#0d1117")).Background(c("#1d4ed8", "#93c5fd"))
	// An unfocused pane's selection is a quiet background bar: visible, but not competing with the focus.
	t.SelectedDim = lipgloss.NewStyle().Background(c("#e5e7eb", "#30363d"))
	t.Good = fg("#15803d", "#4ade80")
	t.Bad = fg("#b91c1c", "#f87171").Bold(true)
	t.Warn = fg("#a16207", "#facc15").Bold(true)
	t.Info = fg("#0e7490", "#67e8f9")
	t.Running = fg("#1d4ed8", "#60a5fa").Bold(true)
	t.Badge = lipgloss.NewStyle().Bold(true).Reverse(true)
	t.ReadOnly = lipgloss.NewStyle().Bold(true).Foreground(c("#ffffff", "#000000")).Background(c("#a16207", "#facc15"))
	t.BorderFocused = fg("#1d4ed8", "#93c5fd")
	t.BorderBlurred = fg("#9ca3af", "#4b5563")
	t.DiffAdd = fg("#15803d", "#4ade80")
	t.DiffDel = fg("#b91c1c", "#f87171")
	t.DiffHunk = fg("#7e22ce", "#c084fc")
	t.Match = lipgloss.NewStyle().Underline(true).Bold(true)
	t.MatchCurrent = t.Match.Reverse(true)
	return t
}

func monoTheme() Theme {
	plain := lipgloss.NewStyle()
	bold := plain.Bold(true)
	return Theme{
		Name: "mono", Title: bold, Dim: plain.Faint(true), Bold: bold, Selected: plain.Reverse(true),
		// Underlined: bold alone did not tell the selected run from the bold rows of runs that need you.
		SelectedDim: bold.Underline(true), Good: plain, Bad: bold, Warn: bold, Info: plain, Running: bold,
		Badge: bold.Reverse(true), ReadOnly: bold.Reverse(true), BorderFocused: bold, BorderBlurred: plain.Faint(true),
		DiffAdd: plain, DiffDel: plain, DiffHunk: plain.Faint(true), Match: bold.Underline(true),
		MatchCurrent: bold.Underline(true).Reverse(true),
	}
}

func (t Theme) StatusStyle(s model.RunStatus) lipgloss.Style {
	switch s {
	case model.StatusRunning:
		return t.Running
	case model.StatusCompleted:
		return t.Good
	case model.StatusFailed, model.StatusBlocked:
		return t.Bad
	case model.StatusStalled, model.StatusAwaitingInput:
		return t.Warn
	}
	return t.Dim
}

func (t Theme) StageStyle(s model.StageStatus) lipgloss.Style {
	switch s {
	case model.StageCompleted:
		return t.Good
	case model.StageRunning:
		return t.Running
	case model.StageFailed:
		return t.Bad
	}
	return t.Dim
}

func (t Theme) VerdictStyle(v model.Verdict) lipgloss.Style {
	switch v {
	case model.VerdictLive:
		return t.Running
	case model.VerdictStale:
		return t.Warn
	}
	return t.Bad
}

func (t Theme) LevelStyle(l model.Level) lipgloss.Style {
	switch l {
	case model.LevelError:
		return t.Bad
	case model.LevelWarn:
		return t.Warn
	case model.LevelGood:
		return t.Good
	}
	return lipgloss.NewStyle()
}

func LevelGlyph(l model.Level) string {
	switch l {
	case model.LevelError:
		return "✗"
	case model.LevelWarn:
		return "⚠"
	case model.LevelGood:
		return "✓"
	}
	return " "
}

// DarkFromColorFGBG reads rxvt's COLORFGBG ("15;0", "0;default;15"): its last field is the background's
// ANSI colour number. 0–6 and 8 are dark backgrounds, 7 and 9–15 light ones.
func DarkFromColorFGBG(v string) (dark, ok bool) {
	if v == "" {
		return false, false
	}
	parts := strings.Split(v, ";")
	n, err := strconv.Atoi(strings.TrimSpace(parts[len(parts)-1]))
	if err != nil || n < 0 || n > 15 {
		return false, false
	}
	return n <= 6 || n == 8, true
}
