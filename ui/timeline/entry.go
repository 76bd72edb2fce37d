// The whole entry under the cursor (enter): its continuation lines read from the source, bounded, for the
// pager.

package timeline

import (
	"fmt"
	"runwatch/model"
	"runwatch/plural"
	"runwatch/ui/app"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// entryMaxLines bounds what enter reads of one entry: an agent dumping a million continuation lines still
// opens at once, with a note of what was left out.
const entryMaxLines = 20000

// entryMaxBytes bounds the lines read whole past the index's line cap: a 50 MiB payload opens whole, a
// larger entry keeps its longest lines cut, and says so.
const entryMaxBytes = 64 << 20

// entryStarter finds the timestamped line an entry starts at (runlog.Index, MemSource).
type entryStarter interface{ EntryStart(line int) int }

// openEntry opens the timeline entry under the cursor whole (its timestamped line and every continuation
// line, lines longer than the index keeps read whole from the file) in a pager overlay, wrapped. The entry
// is read in a command, off the UI goroutine, bounded by entryMaxLines and entryMaxBytes.
func (p *Pane) openEntry() tea.Cmd {
	tl := &p.timeline
	if tl.src == nil || tl.Len() == 0 {
		p.app.Note("no timeline entry here")
		return nil
	}
	line, ok := tl.LogLine(tl.cursor)
	if !ok {
		return nil
	}
	src, pattern, regex, runLog := tl.src, tl.srch.pattern, tl.srch.regex, tl.runLog
	return func() tea.Msg {
		title, txt, ok := readWholeEntry(src, line, runLog)
		if !ok {
			return app.PagerMsg{Note: "no timeline entry here (the log changed?)"}
		}
		return app.PagerMsg{Title: title, Text: txt, Copyable: true, Pattern: pattern, Regex: regex}
	}
}

// readWholeEntry reads the entry holding line, with its title (which says when runLog has the entry's
// action undone).
func readWholeEntry(src app.LogSource, line int, runLog *model.LogRef) (title, txt string, ok bool) {
	start := line
	if es, ok := src.(entryStarter); ok {
		start = es.EntryStart(line)
	}
	lines, more := readEntry(src, start)
	if len(lines) == 0 {
		return "", "", false
	}
	lb, _ := src.(lineByter)
	size, cut := 0, false
	for i, l := range lines {
		if isCutLine(l) {
			if whole, ok := readLine(lb, start+i, entryMaxBytes-size); ok {
				lines[i] = whole
			} else {
				cut = true
			}
		}
		size += len(lines[i])
	}
	title = fmt.Sprintf("Entry at line %d, %s", start+1, plural.Count(len(lines), "line", "lines"))
	if runLog.IsUndone(parseLine(lines[0])) {
		title += " · " + undoneMark + ": runwatch undid this action since"
	}
	if cut {
		title += fmt.Sprintf(" · over %d MiB: lines over %d KiB are cut", entryMaxBytes>>20, maxLineKiB)
	}
	txt = strings.Join(lines, "\n")
	if more {
		txt += fmt.Sprintf("\n… the entry goes on past %d lines; the timeline shows the rest", entryMaxLines)
	}
	return title, txt, true
}

// readLine reads line whole from the file when it is at most room bytes.
func readLine(lb lineByter, line, room int) (string, bool) {
	if lb == nil {
		return "", false
	}
	_, n, err := lb.LineBytes(line, 0, 0)
	if err != nil || n > int64(room) {
		return "", false
	}
	b, _, err := lb.LineBytes(line, 0, int(n))
	if err != nil || int64(len(b)) != n {
		return "", false
	}
	return string(b), true
}

const maxLineKiB = 16

// readEntry reads the entry starting at start: lines up to the next timestamped one.
func readEntry(src app.LogSource, start int) (lines []string, more bool) {
	n := src.Len()
	for at := start; at < n && len(lines) < entryMaxLines; {
		chunk := src.Lines(at, min(256, entryMaxLines-len(lines)))
		if len(chunk) == 0 {
			break
		}
		for i, l := range chunk {
			if at+i > start && parseLine(l).HasTime {
				return lines, false
			}
			lines = append(lines, l)
		}
		at += len(chunk)
	}
	next := src.Lines(start+len(lines), 1)
	return lines, len(lines) >= entryMaxLines && len(next) == 1 && !parseLine(next[0]).HasTime
}
