package model

// Glyphs pair every status with a symbol so meaning never rests on colour alone (NO_COLOR, monochrome
// terminals, colour-blind readers). One table for every surface: the dashboard, the status table, briefs.

// Glyph of a run status. Paused is "‖" rather than U+23F8: many terminal fonts lack the emoji-range pause
// sign, draw a box or a double-width cell, and break column alignment.
func (s RunStatus) Glyph() string {
	switch s {
	case StatusRunning:
		return "▶"
	case StatusPaused:
		return "‖"
	case StatusAwaitingInput:
		return "?"
	case StatusStalled:
		return "⚠"
	case StatusFailed:
		return "✗"
	case StatusBlocked:
		return "⊘"
	case StatusCompleted:
		return "✓"
	}
	return "·"
}

// Short is the status in a word that fits a narrow column ("input", "done"); the glyph beside it and the
// long form elsewhere say the rest. The dashboard's STATUS column and status's narrow table both use it.
func (s RunStatus) Short() string {
	switch s {
	case StatusAwaitingInput:
		return "input"
	case StatusCompleted:
		return "done"
	}
	return string(s)
}

// Glyph of a stage status.
func (s StageStatus) Glyph() string {
	switch s {
	case StageCompleted:
		return "✓"
	case StageRunning:
		return "▶"
	case StageFailed:
		return "✗"
	case StageSkipped:
		return "–"
	}
	return "○"
}

// A lock verdict has no glyph: live, stale and unknown are written as words wherever they show (the LOCK
// column, Detail's [unknown], the brief's **stale**), because the symbols left would repeat a run's or a
// stage's (▶ running, ✗ failed, ? awaiting input) with another meaning.
