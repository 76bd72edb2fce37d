package ui

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// richLine is one line of text to draw in a pane, kept as plain text with a style per byte rather than as
// an ANSI string, so it can be wrapped or windowed anywhere and every row still gets its own complete
// styling (a style cut by a wrap would otherwise end at the pane border). prefix is drawn on the first row
// only (a timestamp column, a list marker); continuation rows are indented to line up with the text after
// it, plus the body's own leading blanks, so a wrapped `  artifact=…` stays visibly inside its entry.
//
// Hand-written because the text helpers at hand do not serve: ansi.Wrap and viewport's soft wrap restart
// every row at column 0 (no hanging indent), and neither can window a line horizontally while keeping a
// timestamp column fixed.
type richLine struct {
	prefix string // styled; its width is the hanging indent
	body   string // plain, sanitized text
	ids    []uint8
	styles []*lipgloss.Style // styles[ids[i]] styles body[i]; id 0 is the base style, nil is unstyled
	// leftMore and rightMore say the body is a window of a longer line (read from the file in pieces),
	// so window marks that side even at the body's own edge.
	leftMore, rightMore bool
	sgr                 []sgrPair // per style, filled as render meets them
}

// newRichLine starts a line whose body is drawn in base (nil: unstyled).
func newRichLine(prefix, body string, base *lipgloss.Style) *richLine {
	return &richLine{prefix: prefix, body: body, ids: make([]uint8, len(body)), styles: []*lipgloss.Style{base}}
}

// style styles body[a:b] with st (later calls win where they overlap).
func (l *richLine) style(a, b int, st lipgloss.Style) {
	a, b = max(0, a), min(len(l.body), b)
	if a >= b || len(l.styles) == 255 {
		return
	}
	id := uint8(len(l.styles))
	l.styles = append(l.styles, &st)
	l.sgr = nil
	for i := a; i < b; i++ {
		l.ids[i] = id
	}
}

// highlight styles every match of re in the body and returns how many there were.
func (l *richLine) highlight(re *regexp.Regexp, st lipgloss.Style) int {
	if re == nil || l.body == "" {
		return 0
	}
	ms := re.FindAllStringIndex(l.body, -1)
	for _, m := range ms {
		if m[1] > m[0] {
			l.style(m[0], m[1], st)
		}
	}
	return len(ms)
}

// render draws body[a:b] with its styles.
func (l *richLine) render(a, b int) string {
	var sb strings.Builder
	for i := a; i < b; {
		j := i + 1
		for j < b && l.ids[j] == l.ids[i] {
			j++
		}
		l.renderSeg(&sb, l.ids[i], l.body[i:j])
		i = j
	}
	return sb.String()
}

// renderSeg writes seg in style id. A highlighted line has a segment per match, and lipgloss's Render
// measures and re-parses each one (most of a frame's time with wrap on a screen of long lines); the SGR
// sequences a plain style wraps its text in are taken from it once per line and reused.
func (l *richLine) renderSeg(sb *strings.Builder, id uint8, seg string) {
	st := l.styles[id]
	if st == nil {
		sb.WriteString(seg)
		return
	}
	if l.sgr == nil {
		l.sgr = make([]sgrPair, len(l.styles))
	}
	p := &l.sgr[id]
	if !p.known {
		*p = sgrOf(st)
	}
	if !p.ok {
		sb.WriteString(st.Render(seg))
		return
	}
	sb.WriteString(p.open)
	sb.WriteString(seg)
	sb.WriteString(p.close)
}

// sgrPair is what a style writes before and after its text; ok is false for a style that does more than
// colour and attributes (padding, width, borders), which must go through Render.
type sgrPair struct {
	open, close string
	known, ok   bool
}

func sgrOf(st *lipgloss.Style) sgrPair {
	const probe = "x" // no SGR sequence holds an x
	r := st.Render(probe)
	i := strings.Index(r, probe)
	if i < 0 || ansi.Strip(r) != probe {
		return sgrPair{known: true}
	}
	return sgrPair{open: r[:i], close: r[i+len(probe):], known: true, ok: true}
}

// indent is the hanging indent of continuation rows: the prefix plus the body's leading blanks, capped so a
// deeply indented line in a narrow pane still gets room for text.
func (l *richLine) indent(w int) int {
	n := ansi.StringWidth(l.prefix)
	for i := 0; i < len(l.body) && l.body[i] == ' '; i++ {
		n++
	}
	return min(n, w/2)
}

// wrap draws the line in rows of at most w cells.
func (l *richLine) wrap(w int) []string {
	lay := l.rows(w)
	out := make([]string, len(lay.rows))
	for i := range lay.rows {
		out[i] = l.drawRow(lay, i)
	}
	return out
}

// wrapped is a line laid out in rows without drawing them: a pane counts the rows of every visible line
// but draws only those that fit.
type wrapped struct {
	rows []wrapRow
	ind  int // the hanging indent of rows after the first
	w    int
}

// wrapRow is one row of a wrapped line: body[a:b], after the prefix (first row) or the hanging indent.
type wrapRow struct{ a, b int }

// rows lays the line out in rows of at most w cells.
func (l *richLine) rows(w int) wrapped {
	lay := wrapped{w: w}
	pw := ansi.StringWidth(l.prefix)
	if w <= pw {
		lay.rows = []wrapRow{{-1, -1}} // the prefix alone, cut to the width
		return lay
	}
	lay.ind = l.indent(w)
	for a := 0; len(lay.rows) == 0 || a < len(l.body); {
		room := w - lay.ind
		if len(lay.rows) == 0 {
			room = w - pw
		}
		b := wrapEnd(l.body, a, room)
		lay.rows = append(lay.rows, wrapRow{a, b})
		a = b
		// A row that starts with the blank it broke at would look like extra indentation.
		for a < len(l.body) && l.body[a] == ' ' && a > 0 {
			a++
		}
	}
	return lay
}

// drawRow draws row i of a layout from rows.
func (l *richLine) drawRow(lay wrapped, i int) string {
	r := lay.rows[i]
	switch {
	case r.a < 0:
		return ansi.Truncate(l.prefix, lay.w, "")
	case i == 0:
		return l.prefix + l.render(r.a, r.b)
	}
	return strings.Repeat(" ", lay.ind) + l.render(r.a, r.b)
}

// window draws cells [x, x+w-prefix) of the body after the prefix: a horizontal scroll that keeps the
// prefix (the time column) in place. ‹ and › in the first and last cells say the line goes on that way.
func (l *richLine) window(x, w int) string {
	pw := ansi.StringWidth(l.prefix)
	if w <= pw {
		return ansi.Truncate(l.prefix, w, "")
	}
	room := w - pw
	a := 0
	if !l.leftMore {
		a = cellOffset(l.body, 0, x) // a window read from the file already starts at x
	}
	b := cellOffset(l.body, a, room)
	left, right := a > 0 || l.leftMore, b < len(l.body) || l.rightMore
	if right {
		b = cellOffset(l.body, a, room-1)
	}
	if left {
		a = min(b, cellOffset(l.body, a, 1))
	}
	s := l.prefix
	if left {
		s += l.mark("‹")
	}
	s += l.render(a, b)
	if right {
		s += l.mark("›")
	}
	return s
}

// mark draws a continuation mark in the base style, so it stays inside a selection bar.
func (l *richLine) mark(m string) string {
	if st := l.styles[0]; st != nil {
		return st.Render(m)
	}
	return m
}

// width is the body's width in cells.
func (l *richLine) width() int { return ansi.StringWidth(l.body) }

// cellOffset returns the byte offset reached by walking n cells of s from byte a (never splitting a rune,
// never passing a wide rune that would not fit).
func cellOffset(s string, a, n int) int {
	i, used := a, 0
	for i < len(s) {
		if s[i] < utf8.RuneSelf && used < n { // ASCII, most of any log, without a call per byte
			i++
			used++
			continue
		}
		next, cw := nextCell(s, i)
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
	b := cellOffset(s, a, max(1, room))
	if b == a && a < len(s) {
		b, _ = nextCell(s, a) // a rune wider than the row still advances
	}
	if b >= len(s) {
		return len(s)
	}
	if s[b] == ' ' {
		return b
	}
	floor := cellOffset(s, a, room*2/3)
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

// nextCell returns the byte after the rune at i and its width in cells; printable ASCII, most of any log,
// skips the width table.
func nextCell(s string, i int) (int, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return i + 1, 1
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return i + size, ansi.StringWidth(s[i : i+size])
}

// hangingPrefix splits a line of prose (the brief's Markdown) into its list marker or indentation and its
// text, so a wrapped bullet's continuation rows line up under its text.
func hangingPrefix(line string) (prefix, body string) {
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
