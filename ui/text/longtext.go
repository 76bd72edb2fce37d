// Long styled lines: wrapped with a hanging indent, windowed sideways, highlighted by a search.

package text

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// RichLine is one line of text to draw in a pane, kept as plain text with a style per byte rather than as
// an ANSI string, so it can be wrapped or windowed anywhere and every row still gets its own complete
// styling (a style cut by a wrap would otherwise end at the pane border). prefix is drawn on the first row
// only (a timestamp column, a list marker); continuation rows are indented to line up with the text after
// it, plus the body's own leading blanks, so a wrapped `  artifact=…` stays visibly inside its entry.
//
// Hand-written because the text helpers at hand do not serve: ansi.Wrap and viewport's soft wrap restart
// every row at column 0 (no hanging indent), and neither can window a line horizontally while keeping a
// timestamp column fixed.
type RichLine struct {
	Prefix string // styled; its width is the hanging indent
	Body   string // plain, sanitized text
	ids    []uint8
	Styles []*lipgloss.Style // Styles[ids[i]] styles Body[i]; id 0 is the base style, nil is unstyled
	// leftMore and rightMore say the body is a window of a longer line (read from the file in pieces),
	// so window marks that side even at the body's own edge.
	LeftMore, RightMore bool
	sgr                 []sgrPair // per style, filled as render meets them
}

// NewRichLine starts a line whose body is drawn in base (nil: unstyled).
func NewRichLine(prefix, body string, base *lipgloss.Style) *RichLine {
	return &RichLine{Prefix: prefix, Body: body, ids: make([]uint8, len(body)), Styles: []*lipgloss.Style{base}}
}

// Style styles body[a:b] with st (later calls win where they overlap).
func (l *RichLine) Style(a, b int, st lipgloss.Style) {
	a, b = max(0, a), min(len(l.Body), b)
	if a >= b || len(l.Styles) == 255 {
		return
	}
	id := uint8(len(l.Styles))
	l.Styles = append(l.Styles, &st)
	l.sgr = nil
	for i := a; i < b; i++ {
		l.ids[i] = id
	}
}

// Highlight styles every match of re in the body and returns how many there were.
func (l *RichLine) Highlight(re *regexp.Regexp, st lipgloss.Style) int {
	if re == nil || l.Body == "" {
		return 0
	}
	ms := re.FindAllStringIndex(l.Body, -1)
	for _, m := range ms {
		if m[1] > m[0] {
			l.Style(m[0], m[1], st)
		}
	}
	return len(ms)
}

// Render draws body[a:b] with its styles.
func (l *RichLine) Render(a, b int) string {
	var sb strings.Builder
	for i := a; i < b; {
		j := i + 1
		for j < b && l.ids[j] == l.ids[i] {
			j++
		}
		l.renderSeg(&sb, l.ids[i], l.Body[i:j])
		i = j
	}
	return sb.String()
}

// renderSeg writes seg in style id. A highlighted line has a segment per match, and lipgloss's Render
// measures and re-parses each one (most of a frame's time with wrap on a screen of long lines); the SGR
// sequences a plain style wraps its text in are taken from it once per line and reused.
func (l *RichLine) renderSeg(sb *strings.Builder, id uint8, seg string) {
	st := l.Styles[id]
	if st == nil {
		sb.WriteString(seg)
		return
	}
	if l.sgr == nil {
		l.sgr = make([]sgrPair, len(l.Styles))
	}
	p := &l.sgr[id]
	if !p.known {
		*p = SGROf(st)
	}
	if !p.ok {
		sb.WriteString(st.Render(seg))
		return
	}
	sb.WriteString(p.Open)
	sb.WriteString(seg)
	sb.WriteString(p.Close)
}

// sgrPair is what a style writes before and after its text; ok is false for a style that does more than
// colour and attributes (padding, width, borders), which must go through Render.
type sgrPair struct {
	Open, Close string
	known, ok   bool
}

// SGROf is the pair st writes around its text, worked out once per style of a line.
func SGROf(st *lipgloss.Style) sgrPair {
	const probe = "x" // no SGR sequence holds an x
	r := st.Render(probe)
	i := strings.Index(r, probe)
	if i < 0 || ansi.Strip(r) != probe {
		return sgrPair{known: true}
	}
	return sgrPair{Open: r[:i], Close: r[i+len(probe):], known: true, ok: true}
}

// indent is the hanging indent of continuation rows: the prefix plus the body's leading blanks, capped so a
// deeply indented line in a narrow pane still gets room for text.
func (l *RichLine) indent(w int) int {
	n := ansi.StringWidth(l.Prefix)
	for i := 0; i < len(l.Body) && l.Body[i] == ' '; i++ {
		n++
	}
	return min(n, w/2)
}

// wrapped is a line laid out in rows without drawing them: a pane counts the rows of every visible line
// but draws only those that fit.
type wrapped struct {
	Rows []wrapRow
	Ind  int // the hanging indent of rows after the first
	w    int
}

// wrapRow is one row of a wrapped line: body[a:b], after the prefix (first row) or the hanging indent.
type wrapRow struct{ A, B int }

// Rows lays the line out in rows of at most w cells.
func (l *RichLine) Rows(w int) wrapped {
	lay := wrapped{w: w}
	pw := ansi.StringWidth(l.Prefix)
	if w <= pw {
		lay.Rows = []wrapRow{{-1, -1}} // the prefix alone, cut to the width
		return lay
	}
	lay.Ind = l.indent(w)
	for a := 0; len(lay.Rows) == 0 || a < len(l.Body); {
		room := w - lay.Ind
		if len(lay.Rows) == 0 {
			room = w - pw
		}
		b := wrapEnd(l.Body, a, room)
		lay.Rows = append(lay.Rows, wrapRow{a, b})
		a = b
		// A row that starts with the blank it broke at would look like extra indentation.
		for a < len(l.Body) && l.Body[a] == ' ' && a > 0 {
			a++
		}
	}
	return lay
}

// DrawRow draws row i of a layout from rows.
func (l *RichLine) DrawRow(lay wrapped, i int) string {
	r := lay.Rows[i]
	switch {
	case r.A < 0:
		return ansi.Truncate(l.Prefix, lay.w, "")
	case i == 0:
		return l.Prefix + l.Render(r.A, r.B)
	}
	return strings.Repeat(" ", lay.Ind) + l.Render(r.A, r.B)
}

// Window draws cells [x, x+w-prefix) of the body after the prefix: a horizontal scroll that keeps the
// prefix (the time column) in place. ‹ and › in the first and last cells say the line goes on that way.
func (l *RichLine) Window(x, w int) string {
	pw := ansi.StringWidth(l.Prefix)
	if w <= pw {
		return ansi.Truncate(l.Prefix, w, "")
	}
	room := w - pw
	a := 0
	if !l.LeftMore {
		a = CellOffset(l.Body, 0, x) // a window read from the file already starts at x
	}
	b := CellOffset(l.Body, a, room)
	left, right := a > 0 || l.LeftMore, b < len(l.Body) || l.RightMore
	if right {
		b = CellOffset(l.Body, a, room-1)
	}
	if left {
		a = min(b, CellOffset(l.Body, a, 1))
	}
	s := l.Prefix
	if left {
		s += l.mark("‹")
	}
	s += l.Render(a, b)
	if right {
		s += l.mark("›")
	}
	return s
}

// mark draws a continuation mark in the base style, so it stays inside a selection bar.
func (l *RichLine) mark(m string) string {
	if st := l.Styles[0]; st != nil {
		return st.Render(m)
	}
	return m
}

// Width is the body's width in cells.
func (l *RichLine) Width() int { return ansi.StringWidth(l.Body) }

// CellOffset returns the byte offset reached by walking n cells of s from byte a (never splitting a rune,
// never passing a wide rune that would not fit).
func CellOffset(s string, a, n int) int {
	i, used := a, 0
	for i < len(s) {
		if s[i] < utf8.RuneSelf && used < n { // ASCII, most of any log, without a call per byte
			i++
			used++
			continue
		}
		next, cw := NextCell(s, i)
		if used+cw > n {
			break
		}
		used += cw
		i = next
	}
	return i
}

// wrapEnd returns where a row of at most room cells starting at byte a ends: after the last blank in the
// row's last third when there is one (words stay whole where that costs little), else at the cell limit.
func wrapEnd(s string, a, room int) int {
	b := CellOffset(s, a, max(1, room))
	if b == a && a < len(s) {
		b, _ = NextCell(s, a) // a rune wider than the row still advances
	}
	if b >= len(s) {
		return len(s)
	}
	if s[b] == ' ' {
		return b
	}
	floor := CellOffset(s, a, room*2/3)
	for i := b - 1; i > floor; i-- {
		if s[i] == ' ' {
			return i + 1
		}
	}
	// A word that fits a row of its own (a run id in a command, a path) is never cut in two: the row ends
	// before it, however early. Only a word longer than a row is cut at the limit.
	for i := floor; i > a; i-- {
		if s[i] == ' ' {
			end := strings.IndexByte(s[b:], ' ')
			if end < 0 {
				end = len(s) - b
			}
			if ansi.StringWidth(s[i+1:b+end]) <= room {
				return i + 1
			}
			break
		}
	}
	return b
}

// NextCell returns the byte after the rune at i and its width in cells; printable ASCII, most of any log,
// skips the width table.
func NextCell(s string, i int) (int, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return i + 1, 1
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return i + size, ansi.StringWidth(s[i : i+size])
}

// HangingPrefix splits a line of prose (the brief's Markdown) into its list marker or indentation and its
// text, so a wrapped bullet's continuation rows line up under its text.
func HangingPrefix(line string) (prefix, body string) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	rest := line[i:]
	for _, m := range []string{"- [ ] ", "- [x] ", "- ", "* ", "> "} {
		if strings.HasPrefix(rest, m) {
			return line[:i+len(m)], line[i+len(m):]
		}
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j > 0 && j+1 < len(rest) && (rest[j] == '.' || rest[j] == ')') && rest[j+1] == ' ' {
		return line[:i+j+2], line[i+j+2:]
	}
	return line[:i], line[i:]
}
