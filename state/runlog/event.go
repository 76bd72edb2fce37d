package runlog

import (
	"strings"

	"runwatch/model"
)

// The writers have no fixed vocabulary (docs/FORMATS.md B.5), so events are recognised by shape:
//
//   - `stage_start stage=EQ1`, `lock-acquired pid=1`: a first token with _ or - is the event. Event names are
//     normalised to lower snake case (`lock-acquired` → `lock_acquired`) so consumers match one spelling;
//     Message keeps the raw text.
//   - `S1 complete`, `S1 artifact integrity`: a stage id followed by bare words is the event "stage_" + words
//     (`stage_complete`, `stage_artifact_integrity`), and the stage goes into Fields as stage=S1. The same
//     derived stage field is added for `stage-complete M0 next=M1`. These are the only fields not written as
//     key=value, and they are added only when the line has no stage= of its own.
//   - `bootstrap RUN_ID=…`: one lower-case word followed only by key=value pairs is the event.
//   - anything else is free text: no event.
//
// Fields are the key=value pairs of the first line in order, then those of continuation lines (`  key=value`,
// or unindented raw payload lines such as a dumped env-style lock).

// levelWords classify an entry by the words of its event and free text (key=value pairs are not looked at,
// so `errors=0` or `failed_metrics=` alone do not make an error). Error beats warn beats good.
var levelWords = []struct {
	level model.Level
	words []string
}{
	{model.LevelError, []string{"error", "failed", "failure", "fatal", "panic", "blocked", "exception", "aborted", "crashed"}},
	{model.LevelWarn, []string{"stale", "stopping", "stopped", "warn", "warning", "retrying", "interrupted"}},
	{model.LevelGood, []string{"complete", "completed", "done", "passed", "succeeded"}},
}

// parseMessage fills Event, Fields and Level of an entry from its Message.
func parseMessage(e *model.LogEntry) {
	var arr [16]token
	toks := tokenize(arr[:0], e.Message)
	for _, t := range toks {
		if t.isKV {
			e.Fields = append(e.Fields, model.KV{Key: t.key, Value: t.value})
		}
	}
	e.Event = eventOf(toks, e)
	e.Level = levelOf(e.Event, toks)
}

func eventOf(toks []token, e *model.LogEntry) string {
	if len(toks) == 0 || toks[0].isKV {
		return ""
	}
	first := toks[0].text
	if isEventName(first) {
		ev := normaliseEvent(first)
		if strings.HasPrefix(ev, "stage_") && len(toks) > 1 && !toks[1].isKV && isStageID(toks[1].text) {
			addDerivedStage(e, toks[1].text)
		}
		return ev
	}
	if isStageID(first) && len(toks) > 1 {
		var words []string
		for _, t := range toks[1:] {
			if t.isKV || !isLowerWord(t.text) {
				break
			}
			words = append(words, t.text)
		}
		if len(words) > 0 && len(words) == countLeadingWords(toks[1:]) {
			addDerivedStage(e, first)
			return "stage_" + strings.Join(words, "_")
		}
		return ""
	}
	if isLowerWord(first) {
		for _, t := range toks[1:] {
			if !t.isKV {
				return ""
			}
		}
		return first
	}
	return ""
}

// countLeadingWords counts the tokens before the first key=value pair: a stage event is only recognised when
// all of them are plain words (`S1 complete next=S2`), not when free text follows (`S1 took 3 tries`).
func countLeadingWords(toks []token) int {
	n := 0
	for _, t := range toks {
		if t.isKV {
			break
		}
		n++
	}
	return n
}

func addDerivedStage(e *model.LogEntry, stage string) {
	for _, f := range e.Fields {
		if f.Key == "stage" {
			return
		}
	}
	e.Fields = append([]model.KV{{Key: "stage", Value: stage}}, e.Fields...)
}

// levelByWord maps each word of levelWords to its level.
var levelByWord = func() map[string]model.Level {
	m := map[string]model.Level{}
	for _, lw := range levelWords {
		for _, w := range lw.words {
			m[w] = lw.level
		}
	}
	return m
}()

var levelRank = map[model.Level]int{model.LevelGood: 1, model.LevelWarn: 2, model.LevelError: 3}

// levelOf ranks the words of the event and of the tokens that are not key=value pairs.
func levelOf(event string, toks []token) model.Level {
	best := model.LevelNone
	consider := func(s string) {
		forEachWord(s, func(w string) {
			if len(w) > 16 {
				return
			}
			var low [16]byte
			for i := 0; i < len(w); i++ {
				c := w[i]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				low[i] = c
			}
			if l, ok := levelByWord[string(low[:len(w)])]; ok && levelRank[l] > levelRank[best] {
				best = l
			}
		})
	}
	consider(event)
	for _, t := range toks {
		if !t.isKV {
			consider(t.text)
		}
	}
	return best
}

// forEachWord calls fn with each run of ASCII letters and digits in s, so `stage_blocked`, `lock-stale`
// and `complete:` yield their words.
func forEachWord(s string, fn func(string)) {
	start := -1
	for i := 0; i <= len(s); i++ {
		alnum := i < len(s) && (isLetter(s[i]) || isDigit(s[i]))
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			fn(s[start:i])
			start = -1
		}
	}
}

// isEventName: letters, digits, _ and -, starting with a letter and containing at least one _ or -.
func isEventName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	sep := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-':
			sep = true
		case isLetter(c) || isDigit(c):
		default:
			return false
		}
	}
	return sep && s[len(s)-1] != '_' && s[len(s)-1] != '-'
}

func normaliseEvent(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// isStageID matches the stage ids seen in logs: letters then digits, optionally more letters (S1, EQ1, M14,
// C3, R9B). A digit is required so ordinary capitalised words are not taken for stages.
func isStageID(s string) bool {
	i := 0
	for i < len(s) && isUpper(s[i]) {
		i++
	}
	if i == 0 || i > 4 {
		return false
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i {
		return false
	}
	for j < len(s) && (isUpper(s[j]) || isDigit(s[j])) {
		j++
	}
	return j == len(s) && len(s) <= 12
}

func isLowerWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// continuationFields reads key=value pairs from a continuation line. A line of only pairs yields them all;
// a line `key=rest of line` with free text after the first value (`commit=<sha> <subject>`) yields one pair
// whose value is the rest of the line, because such values are written unquoted.
func continuationFields(line string) []model.KV {
	s := strings.TrimLeft(line, " \t")
	if eq := keyEnd(s); eq < 0 {
		return nil
	}
	var arr [16]token
	toks := tokenize(arr[:0], s)
	all := true
	for _, t := range toks {
		if !t.isKV {
			all = false
			break
		}
	}
	if all {
		out := make([]model.KV, 0, len(toks))
		for _, t := range toks {
			out = append(out, model.KV{Key: t.key, Value: t.value})
		}
		return out
	}
	eq := keyEnd(s)
	return []model.KV{{Key: s[:eq], Value: unquoteWhole(strings.TrimRight(s[eq+1:], " \t"))}}
}

// token is one whitespace-separated word of a message, or a key=value pair whose value may be quoted (with
// spaces inside) or a bracketed JSON payload.
type token struct {
	text       string
	isKV       bool
	key, value string
}

func tokenize(toks []token, s string) []token {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return toks
		}
		start := i
		if eq := keyEnd(s[i:]); eq >= 0 {
			vstart := i + eq + 1
			value, next := scanValue(s, vstart)
			toks = append(toks, token{text: s[start:next], isKV: true, key: s[i : i+eq], value: value})
			i = next
			continue
		}
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		toks = append(toks, token{text: s[start:i]})
	}
}

// keyEnd returns the index of the '=' ending an identifier key at the start of s, or -1.
func keyEnd(s string) int {
	if s == "" || !(isLetter(s[0]) || s[0] == '_') {
		return -1
	}
	for i := 1; i < len(s) && i <= 128; i++ {
		c := s[i]
		switch {
		case c == '=':
			return i
		case isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.':
		default:
			return -1
		}
	}
	return -1
}

// scanValue reads the value starting at s[i]: "double quoted" with backslash escapes, 'single quoted'
// literally, {…} or […] balanced (JSON payloads contain spaces), else up to the next blank. An unterminated
// quote or bracket runs to the end of the line.
func scanValue(s string, i int) (value string, next int) {
	if i >= len(s) {
		return "", i
	}
	switch s[i] {
	case '"':
		var b strings.Builder
		j := i + 1
		for j < len(s) {
			c := s[j]
			if c == '\\' && j+1 < len(s) {
				b.WriteByte(s[j+1])
				j += 2
				continue
			}
			if c == '"' {
				return b.String(), j + 1
			}
			b.WriteByte(c)
			j++
		}
		return b.String(), j
	case '\'':
		if k := strings.IndexByte(s[i+1:], '\''); k >= 0 {
			return s[i+1 : i+1+k], i + 2 + k
		}
		return s[i+1:], len(s)
	case '{', '[':
		j := balancedEnd(s, i)
		return s[i:j], j
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	return s[i:j], j
}

// balancedEnd returns the index just past the bracket matching s[i], skipping JSON strings.
func balancedEnd(s string, i int) int {
	depth := 0
	inString := false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inString {
			if c == '\\' {
				j++
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

func unquoteWhole(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		if val, next := scanValue(v, 0); next == len(v) {
			return val
		}
	}
	return v
}
