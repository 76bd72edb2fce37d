package model

import (
	"strings"
	"sync"
)

// Intern returns s as one copy shared by every caller that interns the same text. A reader interns the
// words that recur across runs (keys, stage names, statuses, roles): the dashboard keeps every run it
// shows, 10,000 of them, and without it each holds its own copy (issue 35). Text that differs from run to
// run (paths, times, ids) gains nothing and is not interned. The copy never aliases s, so a word cut from a
// file's text does not keep the text. Not package unique: a handle dropped (the string kept, not its
// handle) lets the next collection forget the word, and runs read after it got copies of their own.
func Intern(s string) string {
	if s == "" {
		return ""
	}
	words.Lock()
	defer words.Unlock()
	if w, ok := words.m[s]; ok {
		return w
	}
	w := strings.Clone(s)
	if len(words.m) < maxWords {
		words.m[w] = w
	}
	return w
}

// maxWords bounds what Intern keeps: the words runs repeat are a few thousand; past the bound a word is only
// copied.
const maxWords = 1 << 16

var words = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// RunValues copies the runs a batch shares (watch.Update) for code that keeps or changes its own.
func RunValues(runs []*Run) []Run {
	out := make([]Run, len(runs))
	for i, r := range runs {
		out[i] = *r
	}
	return out
}

// RunPointers gives each run a value of its own to share: a reader keeps them one by one, and a pointer into
// the batch's array would keep the whole batch alive while any of its runs is shown.
func RunPointers(runs []Run) []*Run {
	out := make([]*Run, len(runs))
	for i := range runs {
		r := runs[i]
		out[i] = &r
	}
	return out
}

// PackStrings is list as a list of its length whose strings are cut from one string: for a list a run keeps
// for as long as it is shown (its artifacts' names), one object for the text instead of one a name, and no
// spare room (issue 35). Nil and empty lists come back as they are.
func PackStrings(list []string) []string {
	if len(list) == 0 {
		return list
	}
	n := 0
	for _, s := range list {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range list {
		b.WriteString(s)
	}
	all := b.String()
	out := make([]string, len(list))
	for i, s := range list {
		out[i], all = all[:len(s)], all[len(s):]
	}
	return out
}
