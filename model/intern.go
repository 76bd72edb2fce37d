package model

import "unique"

// Intern returns s as one copy shared by every caller that interns the same text, held only while something
// uses it. A reader interns the words that recur across runs (keys, stage names, statuses, roles): the
// dashboard keeps every run it shows, 10,000 of them, and without it each holds its own copy (issue 35).
// Text that differs from run to run (paths, times, ids) gains nothing and is not interned.
func Intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

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
