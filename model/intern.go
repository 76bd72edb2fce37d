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
