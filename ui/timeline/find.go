// Finding in the timeline: n/N, e/E and the only-matching filter, run off the UI goroutine where the log
// source allows, and what a search that ends says.

package timeline

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runwatch/model"
	"runwatch/state/runlog"
	"runwatch/ui/text"
	"time"

	tea "charm.land/bubbletea/v2"
)

// setSearch compiles the query and finds its first match from the cursor, in the direction it was asked
// for, wrapping at the end; the matches are counted in the background.
func (tl *timeline) setSearch(q string, regex, forward bool, h int) tea.Cmd {
	if q == "" {
		tl.srch.stopCount()
		tl.srch.stopFilter()
		tl.srch = tlSearch{}
		tl.filtered = false
		tl.reload(h)
		return nil
	}
	if err := tl.srch.compile(q, regex); err != nil {
		tl.marker = text.Sanitize(err.Error())
		return nil
	}
	tl.srch.forward = forward
	wasFiltered := tl.filtered
	if wasFiltered {
		tl.unfilter()
	}
	count := tl.startCount()
	if wasFiltered {
		return tea.Batch(count, tl.filterFrom(tl.cursor, h))
	}
	return tea.Batch(count, tl.find(findMatch, tl.cursor+step(forward), forward, h))
}

// findNext is n (same direction as the search) and N (the other way).
func (tl *timeline) findNext(same bool, h int) tea.Cmd {
	if tl.srch.re == nil && tl.last.pattern != "" {
		// The search of the run left, taken up here.
		return tl.setSearch(tl.last.pattern, tl.last.regex, tl.last.forward == same, h)
	}
	if tl.srch.re == nil {
		tl.marker = "no search: press / first"
		return nil
	}
	forward := tl.srch.forward == same
	from := tl.cursor
	if line, ok := tl.LogLine(tl.cursor); ok {
		from = line // filtered: the search runs over the log, and its hit is shown in the filtered view
	}
	return tl.find(findMatch, from+step(forward), forward, h)
}

func (tl *timeline) findError(forward bool, h int) tea.Cmd {
	if tl.filtered {
		tl.marker = "e/E work on the whole log: press & to show it"
		return nil
	}
	return tl.find(findError, tl.cursor+step(forward), forward, h)
}

func step(forward bool) int {
	if forward {
		return 1
	}
	return -1
}

type findKind int

const (
	findMatch findKind = iota
	findError
)

// contextSearcher is a LogSource whose searches may run off the UI goroutine and be abandoned (runlog.Index:
// a search over a 1 GiB log takes seconds and must not freeze the dashboard).
type contextSearcher interface {
	SearchContext(ctx context.Context, re *regexp.Regexp, from int, forward bool) (int, bool)
}

// levelFinder finds entries by the level runlog classifies them with, the same classification the timeline
// colours by, so e/E stop exactly at the lines shown as errors.
type levelFinder interface {
	NextLevel(from int, level model.Level, forward bool) (int, bool)
}

type SearchDoneMsg struct {
	seq     int
	kind    findKind
	line    int
	origin  int // the log line the search started next to: a wrapped hit back on it is the only one
	ok      bool
	wrapped bool
	forward bool
	err     error
}

// find looks for the next match (wrapping around, like less and vim) or error (not wrapping: e at the last
// error says so). In-memory sources answer at once; a file index answers in a command that shows its
// progress and can be cancelled, and a newer search cancels an older one.
func (tl *timeline) find(kind findKind, from int, forward bool, h int) tea.Cmd {
	if tl.src == nil || tl.src.Len() == 0 {
		tl.marker = notFound(kind)
		return nil
	}
	n := tl.src.Len() // the log's lines, also when filtered: from is a log line
	// "next" from the last line starts over at the top: that is a wrap too. Errors wrap as matches do (n/N
	// and e/E alike, as in less).
	startWrapped := from < 0 || from >= n
	origin := from - step(forward)
	from = (from%n + n) % n
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	tl.seq++
	seq, src, re := tl.seq, tl.src, tl.srch.re
	fd, async := src.(finder)
	if !async {
		msg := SearchDoneMsg{seq: seq, kind: kind, forward: forward, origin: origin}
		if kind == findError {
			msg.line, msg.ok, msg.wrapped = wrapAround(n, from, forward, startWrapped, func(from int) (int, bool) { return src.Search(errorPattern, from, forward) })
		} else if ms, ok := src.(*MemSource); ok {
			hit, err := runlog.FindLines(ms.lines, re, from, forward)
			msg.line, msg.ok, msg.wrapped = hit.Line, err == nil, hit.Wrapped || startWrapped
		} else {
			msg.line, msg.ok = src.Search(re, from, forward)
		}
		tl.found(msg, h)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl.cancel = cancel
	tl.marker = ""
	tl.srch.running, tl.srch.started, tl.srch.prog = true, time.Now(), &runlog.Progress{}
	prog := tl.srch.prog
	search := func() tea.Msg {
		msg := SearchDoneMsg{seq: seq, kind: kind, forward: forward, origin: origin}
		switch lf, isLF := src.(levelFinder); {
		case kind == findError && isLF:
			// NextLevel has no context; errors are common, so it returns soon in real logs.
			msg.line, msg.ok, msg.wrapped = wrapAround(n, from, forward, startWrapped, func(from int) (int, bool) { return lf.NextLevel(from, model.LevelError, forward) })
		case kind == findError:
			cs, _ := src.(contextSearcher)
			if cs != nil {
				msg.line, msg.ok, msg.wrapped = wrapAround(n, from, forward, startWrapped, func(from int) (int, bool) { return cs.SearchContext(ctx, errorPattern, from, forward) })
			}
		default:
			hit, err := fd.Find(ctx, re, from, forward, prog)
			msg.line, msg.ok, msg.wrapped, msg.err = hit.Line, err == nil, hit.Wrapped || startWrapped, err
		}
		return msg
	}
	return tea.Batch(search, tl.tickCmd())
}

// wrapAround is find from `from` to the end of n lines (the start, backward), then from the other end: the
// second half of the search wraps.
func wrapAround(n, from int, forward, wrapped bool, find func(from int) (int, bool)) (int, bool, bool) {
	if line, ok := find(from); ok {
		return line, true, wrapped
	}
	start := 0
	if !forward {
		start = n - 1
	}
	line, ok := find(start)
	return line, ok, ok
}

func notFound(kind findKind) string {
	if kind == findError {
		return "no errors in the log"
	}
	return "pattern not found"
}

func (tl *timeline) found(msg SearchDoneMsg, h int) {
	if msg.seq != tl.seq {
		return // cancelled, or replaced by a newer search
	}
	tl.srch.running = false
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	if !msg.ok {
		switch {
		case msg.err != nil && errors.Is(msg.err, context.Canceled):
			tl.marker = "search cancelled"
		case msg.err != nil && !errors.Is(msg.err, runlog.ErrNoMatch):
			tl.marker = text.Sanitize(msg.err.Error())
		default:
			tl.marker = notFound(msg.kind)
		}
		return
	}
	if r, ok := tl.src.(renumberer); ok {
		// The hit is in counted line numbers (a search waits for the count); a renumbering still pending
		// from the estimate would otherwise move the cursor off it.
		r.Renumbered()
	}
	what := "match"
	if msg.kind == findError {
		what = "error"
	}
	tl.marker = text.WrapNote(msg.wrapped, msg.wrapped && msg.line == msg.origin, msg.forward, what)
	tl.follow = false
	if tl.filtered && tl.srch.filter != nil {
		// The hit's entry is in the filtered view once the filter has read that far.
		k, ok := tl.srch.filter.Pos(msg.line)
		if shown, _, _ := tl.srch.filter.Len(); !ok || k >= shown {
			tl.marker = fmt.Sprintf("the next match (line %d) is past what the filter has read so far", msg.line+1)
			return
		}
		tl.cursor = k
		tl.top = max(0, k-h/3)
		tl.reload(h)
		return
	}
	tl.cursor = msg.line
	// Put the match a third of the way down, so its context above is visible.
	tl.top = max(0, msg.line-h/3)
	tl.reload(h)
	tl.srch.rankOK = false
	tl.updateRank()
}

// toggleFiltered switches between highlighting the matches and showing only the entries that match, each
// whole (less's &, lnav's filter-in), keeping the cursor on the same log line where it can.
func (tl *timeline) toggleFiltered(h int) tea.Cmd {
	if tl.srch.re == nil {
		tl.marker = "no search: press / first, then & shows only the matches"
		return nil
	}
	if tl.filtered {
		tl.unfilter()
		tl.reload(h)
		tl.updateRank()
		return nil
	}
	line, _ := tl.LogLine(tl.cursor)
	return tl.filterFrom(line, h)
}

// filterFrom shows only the matching entries, with the cursor going to log line line (or the next shown
// line after it) as soon as the filter has read that far.
func (tl *timeline) filterFrom(line, h int) tea.Cmd {
	switch tl.src.(type) {
	case filterSourcer, *MemSource:
	default:
		tl.marker = "this timeline cannot be filtered"
		return nil
	}
	tl.filtered = true
	tl.follow = false
	tl.cursor, tl.top = 0, 0
	tl.srch.wantLine = line
	cmd := tl.startFilter()
	tl.placeFiltered()
	tl.reload(h)
	return cmd
}

func (tl *timeline) unfilter() {
	if line, ok := tl.LogLine(tl.cursor); ok && tl.Len() > 0 {
		tl.cursor = line
	}
	tl.filtered = false
	tl.srch.stopFilter()
	tl.srch.filter = nil
	tl.top = max(0, tl.cursor-tl.height/3)
	tl.follow = false
}
