package brief

import (
	"path/filepath"
	"strings"
	"unicode"

	"runwatch/model"
	"runwatch/state/envfile"
	"runwatch/state/resumable"
)

// OpenItem is a checklist item not yet 1 in a stage the brief restarts at or says to re-verify, with what the
// run's files say it needs. Needs holds only what is on disk: an empty list means no file says.
type OpenItem struct {
	Stage string     `json:"stage"`
	Key   string     `json:"key"`
	Value string     `json:"value"`
	Needs []ItemNote `json:"needs"`
}

// ItemNote is one place that says what an item needs: a comment beside it in the checklist, or the plan's
// text where it names the item.
type ItemNote struct {
	Source string `json:"source"` // "checklist" or "plan"
	File   string `json:"file"`
	Line   int    `json:"line"`
	Text   string `json:"text"`
}

// Bounds on what a plan may say about one item: the lines that name it, and the lines of a list item that
// follow its first (a Markdown item wraps onto indented lines).
const (
	maxItemNotes        = 3
	maxItemContinuation = 4
)

// openItems lists the open checklist items of the restart stage, then of the stages marked done that the
// checklist contradicts (the brief says to re-verify those), each with its notes.
func openItems(run model.Run, d *model.ResumableDetail, restartIdx int, contradicted []string) []OpenItem {
	var stages []model.Stage
	if restartIdx < len(run.Stages) {
		stages = append(stages, run.Stages[restartIdx])
	}
	for _, key := range contradicted {
		if s := run.Stage(key); s != nil && (restartIdx >= len(run.Stages) || !strings.EqualFold(s.Key, run.Stages[restartIdx].Key)) {
			stages = append(stages, *s)
		}
	}
	var items []OpenItem
	for _, s := range stages {
		for _, it := range s.Checklist {
			if it.Done {
				continue
			}
			v := "0"
			if it.Raw != "" {
				v = it.Raw
			}
			items = append(items, OpenItem{Stage: s.Key, Key: it.Key, Value: v, Needs: []ItemNote{}})
		}
	}
	if len(items) == 0 {
		return nil
	}
	// Comments survive only in a checklist a person keeps by hand; the file was read a moment ago by Load, and
	// a failure to read it again only means no comments.
	if d.ChecklistPath != "" {
		if f, _ := envfile.ReadFile(d.ChecklistPath); f != nil {
			for i := range items {
				for _, c := range f.Comments(items[i].Key) {
					items[i].Needs = append(items[i].Needs, ItemNote{Source: "checklist", File: d.ChecklistPath, Line: c.Line, Text: c.Text})
				}
			}
		}
	}
	if pl := resumable.ReadPlan(run.StatePath, d.Keys); pl.Path != "" {
		lines := strings.Split(pl.Text, "\n")
		for i := range items {
			items[i].Needs = append(items[i].Needs, planNotes(pl.Path, lines, items[i].Key)...)
		}
	}
	return items
}

// planNotes are the plan's lines that name key as a whole word, each with the rest of its list item.
func planNotes(path string, lines []string, key string) []ItemNote {
	var out []ItemNote
	for n := 0; n < len(lines) && len(out) < maxItemNotes; n++ {
		if !namesWord(lines[n], key) {
			continue
		}
		text := strings.TrimSpace(strings.TrimSuffix(lines[n], "\r"))
		if m := listMarker(lines[n]); m >= 0 {
			text = strings.TrimSpace(lines[n][m:])
			for _, box := range []string{"[ ] ", "[x] ", "[X] "} {
				text = strings.TrimPrefix(text, box)
			}
			indent := len(lines[n]) - len(strings.TrimLeft(lines[n], " \t"))
			for k := n + 1; k < len(lines) && k <= n+maxItemContinuation; k++ {
				next := strings.TrimSuffix(lines[k], "\r")
				ind := len(next) - len(strings.TrimLeft(next, " \t"))
				if strings.TrimSpace(next) == "" || ind <= indent || listMarker(next) >= 0 {
					break
				}
				text += " " + strings.TrimSpace(next)
			}
		}
		out = append(out, ItemNote{Source: "plan", File: path, Line: n + 1, Text: text})
	}
	return out
}

// listMarker is the index just past a Markdown list item's marker ("- ", "* ", "1. "), or -1.
func listMarker(line string) int {
	t := strings.TrimLeft(line, " \t")
	start := len(line) - len(t)
	switch {
	case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "):
		return start + 2
	}
	i := 0
	for i < len(t) && i < 4 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return start + i + 2
	}
	return -1
}

// namesWord reports whether word occurs in s with no letter, digit or '_' on either side (case-insensitive):
// CB_ANCHOR_LINKS must not match CB_ANCHOR_LINKS_WRITTEN.
func namesWord(s, word string) bool {
	ls, lw := strings.ToLower(s), strings.ToLower(word)
	for from := 0; ; {
		i := strings.Index(ls[from:], lw)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(lw)
		if (i == 0 || !isWordByte(ls[i-1])) && (end == len(ls) || !isWordByte(ls[end])) {
			return true
		}
		from = i + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}

// noteWhere names a note's place for a person: "checklist.state.env line 4", "the plan p.md, line 38".
func noteWhere(n ItemNote) string {
	if n.Source == "plan" {
		return "the plan " + filepath.Base(n.File) + ", line " + itoa(n.Line)
	}
	return filepath.Base(n.File) + ", line " + itoa(n.Line)
}
