// The timeline's search state: the pattern, the find in flight, its progress and the background count of
// matches (k/N), with the filtered view that & shows.

package timeline

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"runwatch/state/runlog"
	"runwatch/ui/app"
	"runwatch/ui/text"
)

// progressAfter is how long a search runs before its spinner and progress show: shorter ones would only
// flicker.
const progressAfter = 150 * time.Millisecond

// searchTick is how often a running search or count redraws its progress.
const searchTick = 80 * time.Millisecond

var spinFrames = spinner.MiniDot.Frames

// finder is a LogSource that searches with wrap-around and progress, off the UI goroutine (runlog.Index).
type finder interface {
	Find(ctx context.Context, re *regexp.Regexp, from int, forward bool, p *runlog.Progress) (runlog.Hit, error)
}

// matchCounter counts the lines a pattern matches (runlog.Counter, or memCounter for a timeline in memory).
type matchCounter interface {
	Run(ctx context.Context, p *runlog.Progress) error
	Total() (int, bool)
	Rank(line int) (int, bool)
	Counted() int
}

type counterSource interface {
	NewCounter(re *regexp.Regexp) *runlog.Counter
}

// tlSearch is the timeline's search: the pattern, the find in flight and the background count.
type tlSearch struct {
	pattern string
	regex   bool
	re      *regexp.Regexp
	forward bool // the direction of the last / or backward search: n repeats it, N reverses it (vim)

	running bool      // a find is in flight
	started time.Time // when the find in flight began (the wall clock: it times work, not what a run did)
	prog    *runlog.Progress
	frame   int

	counter   matchCounter
	countSeq  int
	countStop context.CancelFunc
	counting  bool
	countProg *runlog.Progress
	countErr  string
	rank      int // matches at or above the cursor line; valid when rankOK
	rankLine  int
	rankOK    bool

	// filter is the "show only matches" view, built in the background like the count.
	filter     entryFilter
	filterSeq  int
	filterStop context.CancelFunc
	filtering  bool
	filterErr  string
	wantLine   int // the log line the cursor goes to once the filter has read it; -1 none
}

type SearchTickMsg struct{ seq int }

type CountDoneMsg struct {
	seq int
	err error
}

// compile sets the pattern; a bad regexp is reported, not searched.
func (s *tlSearch) compile(pattern string, regex bool) error {
	re, err := runlog.CompilePattern(pattern, regex)
	if err != nil {
		return err
	}
	s.pattern, s.regex, s.re = pattern, regex, re
	return nil
}

func (s *tlSearch) stopCount() {
	if s.countStop != nil {
		s.countStop()
		s.countStop = nil
	}
	s.counting = false
}

// startCount begins counting the matches of the current pattern over src.
func (tl *timeline) startCount() tea.Cmd {
	s := &tl.srch
	s.stopCount()
	s.counter, s.rankOK, s.countErr = nil, false, ""
	if s.re == nil || tl.src == nil {
		return nil
	}
	switch src := tl.src.(type) {
	case counterSource:
		s.counter = src.NewCounter(s.re)
	case *MemSource:
		s.counter = newMemCounter(src.lines, s.re)
	default:
		return nil
	}
	return tl.runCount()
}

// runCount counts (or continues counting, after an append) in a command.
func (tl *timeline) runCount() tea.Cmd {
	s := &tl.srch
	if s.counter == nil || s.counting {
		return nil
	}
	if mc, ok := s.counter.(*memCounter); ok {
		mc.Run(context.Background(), nil) // in memory: instant
		tl.updateRank()
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.countStop, s.counting = cancel, true
	s.countSeq++
	s.countProg = &runlog.Progress{}
	seq, c, p := s.countSeq, s.counter, s.countProg
	return tea.Batch(func() tea.Msg {
		return CountDoneMsg{seq: seq, err: c.Run(ctx, p)}
	}, tl.tickCmd())
}

func (tl *timeline) countDone(msg CountDoneMsg) {
	s := &tl.srch
	if msg.seq != s.countSeq {
		return
	}
	s.counting, s.countStop = false, nil
	if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
		s.countErr = text.Sanitize(msg.err.Error())
	}
	tl.updateRank()
}

// updateRank refreshes the ordinal of the cursor line once the count has passed it. It reads at most one
// search piece (4 MiB), so it is done in Update rather than in View.
func (tl *timeline) updateRank() {
	s := &tl.srch
	if s.counter == nil || tl.filtered {
		return
	}
	line := tl.cursor
	if s.rankOK && s.rankLine == line {
		return
	}
	n, ok := s.counter.Rank(line)
	s.rank, s.rankLine, s.rankOK = n, line, ok
}

func (tl *timeline) tickCmd() tea.Cmd {
	seq := tl.seq
	return tea.Tick(searchTick, func(time.Time) tea.Msg { return SearchTickMsg{seq: seq} })
}

// searchTicked redraws progress and the count while a find or count runs; it keeps ticking until both end.
func (tl *timeline) searchTicked(msg SearchTickMsg) tea.Cmd {
	s := &tl.srch
	if !s.running && !s.counting && !s.filtering {
		return nil
	}
	s.frame++
	tl.updateRankIfPassed()
	if tl.filtered {
		tl.placeFiltered()
		tl.reload(tl.height)
	}
	return tl.tickCmd()
}

func (tl *timeline) updateRankIfPassed() {
	s := &tl.srch
	if s.counter != nil && (!s.rankOK || s.rankLine != tl.cursor) && tl.cursor < s.counter.Counted() {
		s.rankOK = false
		tl.updateRank()
	}
}

// CancelSearch stops a find in flight; the cursor stays where it was.
func (tl *timeline) CancelSearch() bool {
	if !tl.srch.running {
		return false
	}
	if tl.cancel != nil {
		tl.cancel()
		tl.cancel = nil
	}
	tl.seq++ // its answer, if it still comes, is not applied
	tl.srch.running = false
	tl.marker = "search cancelled"
	return true
}

// progressTag is the spinner and bytes read of a find that has run for a while, "" before that.
func (tl *timeline) progressTag(now time.Time) string {
	s := &tl.srch
	if !s.running || now.Sub(s.started) < progressAfter {
		return ""
	}
	spin := spinFrames[s.frame%len(spinFrames)]
	if s.prog.Indexing() {
		done, total := s.prog.Bytes()
		return fmt.Sprintf("%s counting lines first %s of %s · esc cancels", spin, text.HumanBytes(done), text.HumanBytes(total))
	}
	done, total := s.prog.Bytes()
	return fmt.Sprintf("%s searching %s of %s · esc cancels", spin, text.HumanBytes(done), text.HumanBytes(total))
}

// CountTag is `match 3/17`, `match 3/≥17…` while counting, `17 matches` off a match.
func (tl *timeline) CountTag() string {
	s := &tl.srch
	if s.counter == nil {
		return ""
	}
	total, done := s.counter.Total()
	tot := fmt.Sprint(total)
	if !done || s.counting {
		tot = fmt.Sprintf("≥%d…", total)
	}
	if tl.filtered && s.filter != nil {
		_, entries, fdone := s.filter.Len()
		n := fmt.Sprintf("%d", entries)
		if !fdone || s.filtering {
			n = fmt.Sprintf("≥%d…", entries)
		}
		word := "entries"
		if entries == 1 && fdone {
			word = "entry"
		}
		return fmt.Sprintf("only matches: %s %s", n, word)
	}
	onMatch := s.re != nil && tl.cursorMatches()
	switch {
	case onMatch && s.rankOK && s.rankLine == tl.cursor:
		return fmt.Sprintf("match %d/%s", s.rank, tot)
	case onMatch:
		return "match ?/" + tot
	case done && !s.counting && total == 0:
		return "no matches"
	}
	return tot + " matches"
}

func (tl *timeline) cursorMatches() bool {
	i := tl.cursor - tl.windowFrom
	if i < 0 || i >= len(tl.window) {
		return false
	}
	if tl.srch.re.MatchString(tl.window[i]) {
		return true
	}
	// A line longer than the timeline keeps may match in the part it does not show. (Rank reads a piece
	// of the file, so View asks it only for such a line.)
	if !isCutLine(tl.window[i]) {
		return false
	}
	if rank, ok := tl.srch.counter.Rank(tl.cursor); ok && tl.cursor > 0 {
		before, _ := tl.srch.counter.Rank(tl.cursor - 1)
		return rank > before
	}
	return false
}

// memCounter is the count over a timeline held in memory.
type memCounter struct {
	lines   []string
	re      *regexp.Regexp
	matches []int
	done    bool
}

func newMemCounter(lines []string, re *regexp.Regexp) *memCounter {
	return &memCounter{lines: lines, re: re}
}

func (c *memCounter) Run(context.Context, *runlog.Progress) error {
	c.matches = c.matches[:0]
	for i, l := range c.lines {
		if c.re.MatchString(l) {
			c.matches = append(c.matches, i)
		}
	}
	c.done = true
	return nil
}

func (c *memCounter) Total() (int, bool) { return len(c.matches), c.done }
func (c *memCounter) Counted() int {
	if c.done {
		return len(c.lines)
	}
	return 0
}

func (c *memCounter) Rank(line int) (int, bool) {
	if !c.done || line < 0 || line >= len(c.lines) {
		return 0, false
	}
	n := 0
	for _, m := range c.matches {
		if m > line {
			break
		}
		n++
	}
	return n, true
}

// entryFilter is the "show only matches" view of a timeline: the entries holding a match, each whole
// (runlog.EntryFilter, over a file or lines in memory).
type entryFilter interface {
	Run(ctx context.Context, p *runlog.Progress) error
	Len() (lines, entries int, done bool)
	Lines(k, n int) []int
	Pos(line int) (int, bool)
	Err() error
}

type filterSourcer interface {
	NewEntryFilter(re *regexp.Regexp) *runlog.EntryFilter
}

type FilterDoneMsg struct {
	seq int
	err error
}

// startFilter begins filtering the timeline to the entries matching the current pattern.
func (tl *timeline) startFilter() tea.Cmd {
	s := &tl.srch
	s.stopFilter()
	s.filter, s.filterErr = nil, ""
	switch src := tl.src.(type) {
	case filterSourcer:
		s.filter = src.NewEntryFilter(s.re)
	case *MemSource:
		s.filter = runlog.FilterLines(src.lines, s.re) // in memory: filtered at once
		if err := s.filter.Err(); err != nil {
			tl.marker = text.Sanitize(err.Error())
		}
		return nil
	default:
		return nil
	}
	return tl.runFilter()
}

// runFilter filters (or goes on filtering, after an append) in a command.
func (tl *timeline) runFilter() tea.Cmd {
	s := &tl.srch
	if !tl.filtered || s.filter == nil || s.filtering {
		return nil
	}
	if ms, ok := tl.src.(*MemSource); ok {
		s.filter = runlog.FilterLines(ms.lines, s.re)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.filterStop, s.filtering = cancel, true
	s.filterSeq++
	seq, f := s.filterSeq, s.filter
	return tea.Batch(func() tea.Msg {
		return FilterDoneMsg{seq: seq, err: f.Run(ctx, nil)}
	}, tl.tickCmd())
}

func (s *tlSearch) stopFilter() {
	if s.filterStop != nil {
		s.filterStop()
		s.filterStop = nil
	}
	s.filtering = false
}

func (tl *timeline) filterDone(msg FilterDoneMsg, h int) {
	s := &tl.srch
	if msg.seq != s.filterSeq {
		return
	}
	s.filtering, s.filterStop = false, nil
	if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
		s.filterErr = text.Sanitize(msg.err.Error())
		tl.marker = s.filterErr
	}
	if tl.filtered {
		tl.placeFiltered()
		tl.reload(h)
	}
}

// placeFiltered puts the cursor of the filtered view on the log line it was on when & was pressed, once
// the filter has read that far.
func (tl *timeline) placeFiltered() {
	s := &tl.srch
	if s.wantLine < 0 || s.filter == nil {
		return
	}
	if k, ok := s.filter.Pos(s.wantLine); ok {
		tl.cursor, tl.top = k, max(0, k-tl.height/3)
		s.wantLine = -1
	} else if _, _, done := s.filter.Len(); done {
		tl.cursor, tl.top = max(0, tl.Len()-1), max(0, tl.Len()-tl.height)
		s.wantLine = -1
	}
}

// filteredSource shows only the entries that match (lnav's filter-in, less's &), each whole.
type filteredSource struct {
	base app.LogSource
	f    entryFilter
}

func (f filteredSource) Len() int {
	n, _, _ := f.f.Len()
	return n
}

// Lines reads the log lines of the view's lines from..from+n, one read per run of adjacent lines.
func (f filteredSource) Lines(from, n int) []string {
	return f.linesOf(f.f.Lines(from, n))
}

func (f filteredSource) linesOf(lines []int) []string {
	var out []string
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && lines[j] == lines[j-1]+1 {
			j++
		}
		out = append(out, f.base.Lines(lines[i], j-i)...)
		i = j
	}
	return out
}

// line is the log line of the view's line k.
func (f filteredSource) line(k int) (int, bool) {
	m := f.f.Lines(k, 1)
	if len(m) == 0 {
		return 0, false
	}
	return m[0], true
}
