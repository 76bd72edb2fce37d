package runs

import (
	"strings"

	"runwatch/model"
)

// filterTerm is one word of the runs filter. Words are ANDed; `!word` negates; `is:`, `kind:` and `has:`
// look at one field, as in GitHub's and k9s's filters; anything else is a substring of the id, title,
// status, kind, stage, folder or the attention reason.
type filterTerm struct {
	neg         bool
	field, text string
	word        string // as typed
}

func parseFilter(s string) []filterTerm {
	var terms []filterTerm
	for _, w := range strings.Fields(s) {
		t := filterTerm{word: w}
		w = strings.ToLower(w)
		if strings.HasPrefix(w, "!") {
			t.neg, w = true, w[1:]
		}
		if f, v, ok := strings.Cut(w, ":"); ok && (f == "is" || f == "kind" || f == "has" || f == "host") {
			t.field, w = f, v
		} else if ok && v != "" && isFieldName(f) {
			// foo:bar reads as a field no run has: said as is:bogus is, not searched for as text.
			t.field = unknownField
		}
		if w == "" {
			continue // a lone "!" or "is:" while typing matches everything
		}
		t.text = w
		terms = append(terms, t)
	}
	return terms
}

// unknownField marks a word written as field:value whose field the filter does not have.
const unknownField = "?"

// isFieldName says f is written as a filter field would be: a word of letters.
func isFieldName(f string) bool {
	for _, r := range f {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return f != ""
}

// filterValues are the words each field takes (is: also takes any run status, or its start).
var filterValues = map[string][]string{
	"is":   {"needs-you", "attention", "archived", "done", "running", "paused", "awaiting-input", "stalled", "failed", "blocked", "completed", "unknown"},
	"kind": {"jonggrang", "resumable", "jg", "rs"},
	"has":  {"lock", "locks", "stale-lock", "stale", "live-lock", "live", "problem", "problems", "error", "errors", "log"},
}

// unknownTerms lists the words of terms no run could ever match (is:bogus), each with the words its field
// takes, so the filter says so rather than silently listing nothing, and those words as typed. A word that
// starts one of them (is:st while typing) is fine.
func unknownTerms(terms []filterTerm) (out, words []string) {
	for _, t := range terms {
		if t.field == unknownField {
			f, _, _ := strings.Cut(t.text, ":")
			out = append(out, t.word+" left out: "+f+": is no filter field; the fields are is:, kind:, has: and host:")
			words = append(words, t.word)
			continue
		}
		vals, ok := filterValues[t.field]
		if !ok {
			continue
		}
		known := false
		for _, v := range vals {
			known = known || strings.HasPrefix(v, t.text)
		}
		if !known {
			out = append(out, t.word+" left out: "+t.field+": takes "+strings.Join(vals, ", "))
			words = append(words, t.word)
		}
	}
	return out, words
}

func matchesFilter(r model.Run, terms []filterTerm) bool {
	for _, t := range terms {
		if t.match(r) == t.neg {
			return false
		}
	}
	return true
}

func (t filterTerm) match(r model.Run) bool {
	switch t.field {
	case "is":
		switch t.text {
		case "needs-you", "attention":
			return r.Attention.NeedsYou
		case "archived":
			return r.Archived
		case "done":
			return r.Status == model.StatusCompleted
		}
		return strings.HasPrefix(string(r.Status), t.text)
	case "kind":
		return strings.HasPrefix(string(r.Kind), t.text) || kindShort(r.Kind) == t.text
	case "has":
		return hasThing(r, t.text)
	case "host":
		// A host is its destination (root@build1, build1:2222); host:build1 finds it by its name too.
		h := strings.ToLower(hostOf(r))
		return strings.HasPrefix(h, t.text) || strings.HasPrefix(h[strings.LastIndexByte(h, '@')+1:], t.text)
	}
	for _, s := range []string{r.ID, r.Title, string(r.Status), string(r.Kind), r.CurrentStage, r.Dir, r.Attention.Reason} {
		if strings.Contains(strings.ToLower(s), t.text) {
			return true
		}
	}
	return false
}

func hasThing(r model.Run, what string) bool {
	switch what {
	case "lock", "locks":
		return len(r.Locks) > 0
	case "stale-lock", "stale":
		return countVerdict(r, model.VerdictStale) > 0
	case "live-lock", "live":
		return countVerdict(r, model.VerdictLive) > 0
	case "problem", "problems":
		return len(r.Problems) > 0
	case "error", "errors":
		for _, p := range r.Problems {
			if p.Severity == model.SeverityError {
				return true
			}
		}
	case "log":
		return r.Log != nil
	}
	return false
}

func countVerdict(r model.Run, v model.Verdict) int {
	n := 0
	for _, l := range r.Locks {
		if l.Verdict == v {
			n++
		}
	}
	return n
}

// hostOf names the machine a run is on: its remote host, or "local".
func hostOf(r model.Run) string {
	if r.Remote != nil {
		return r.Remote.Host
	}
	return "local"
}
