package model

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PlanOrder is what a run's plan (the Markdown file at PLAN_PATH) says about the order of the run's stages.
type PlanOrder struct {
	// IDs are the stages in the plan's order, spelled as the run spells them; nil when the plan settles
	// nothing.
	IDs []string
	// Places are where the plan names every stage in that order ("line 283", "lines 40–46").
	Places []string
	// Conflict says, when two places of the plan name the stages in different orders, which two: such a plan
	// settles nothing.
	Conflict string
}

// Where names the places of the plan that settle the order: "line 283", "lines 120 and 283".
func (o PlanOrder) Where() string {
	switch len(o.Places) {
	case 0:
		return ""
	case 1:
		return o.Places[0]
	}
	var nums []string
	for _, p := range o.Places {
		nums = append(nums, strings.TrimPrefix(strings.TrimPrefix(p, "lines "), "line "))
	}
	return "lines " + strings.Join(nums[:len(nums)-1], ", ") + " and " + nums[len(nums)-1]
}

// maxPlanPlaces bounds how many agreeing places are named: a plan repeating its pipeline everywhere needs
// no longer sentence.
const maxPlanPlaces = 4

// OrderFromPlan finds where a plan names every one of ids in one order: a line that lists them and nothing
// else between them (`ingest -> extract -> …`, "(`ingest`, `extract`, …)", "ingest, extract and …"), or a
// numbered or bulleted list whose items each start with one stage. Every name must be a whole word, matched
// case-insensitively, and appear exactly once in that place. Prose that mentions the stages among other words
// is not a list and proves nothing. All such places must agree: two that disagree settle nothing, and
// Conflict says where.
func OrderFromPlan(text string, ids []string) PlanOrder {
	if len(ids) < 2 {
		return PlanOrder{}
	}
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[strings.ToLower(id)] = i
	}
	type place struct {
		order []int
		line  int
		where string
	}
	var places []place
	lines := strings.Split(text, "\n")
	for n, ln := range lines {
		if order, ok := inlineOrder(strings.TrimSuffix(ln, "\r"), index); ok {
			places = append(places, place{order, n + 1, "line " + strconv.Itoa(n+1)})
		}
	}
	for _, b := range listBlocks(lines, index) {
		if len(b.order) == len(ids) && distinct(b.order) {
			where := "lines " + strconv.Itoa(b.first) + "–" + strconv.Itoa(b.last)
			places = append(places, place{b.order, b.first, where})
		}
	}
	if len(places) == 0 {
		return PlanOrder{}
	}
	// List places were found after the lines; name them all in the plan's own order.
	sort.SliceStable(places, func(i, j int) bool { return places[i].line < places[j].line })
	names := func(order []int) string {
		out := make([]string, len(order))
		for i, k := range order {
			out[i] = ids[k]
		}
		return strings.Join(out, ", ")
	}
	first := places[0]
	var out PlanOrder
	for _, p := range places {
		if !slices.Equal(p.order, first.order) {
			return PlanOrder{Conflict: fmt.Sprintf("%s names %s but %s names %s", first.where, names(first.order),
				p.where, names(p.order))}
		}
		if len(out.Places) < maxPlanPlaces {
			out.Places = append(out.Places, p.where)
		}
	}
	for _, k := range first.order {
		out.IDs = append(out.IDs, ids[k])
	}
	return out
}

func distinct(order []int) bool {
	seen := map[int]bool{}
	for _, k := range order {
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

func isPlanWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

type planWord struct {
	text       string
	start, end int
}

// planWords splits s into its words (letters, digits, '_'), so that a stage name inside S_VERIFY_DONE or
// anchoring is no whole word.
func planWords(s string) []planWord {
	var out []planWord
	start := -1
	for i, r := range s {
		if isPlanWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, planWord{s[start:i], start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, planWord{s[start:], start, len(s)})
	}
	return out
}

// listJoiners are the words that may stand between two items of a list written in a line.
var listJoiners = map[string]bool{"and": true, "then": true}

// inlineOrder reads a line that names every stage once, with nothing but list punctuation (commas, arrows,
// quotes, backticks, brackets, "and", "then", item numbers) between one name and the next.
func inlineOrder(ln string, index map[string]int) ([]int, bool) {
	var order []int
	prevEnd := -1
	for _, w := range planWords(ln) {
		k, ok := index[strings.ToLower(w.text)]
		if !ok {
			continue
		}
		if prevEnd >= 0 && !listGap(ln[prevEnd:w.start]) {
			return nil, false
		}
		order = append(order, k)
		prevEnd = w.end
	}
	return order, len(order) == len(index) && distinct(order)
}

// listGap is the text between two items of a one-line list: only punctuation, joiners and item numbers.
func listGap(gap string) bool {
	if utf8.RuneCountInString(gap) > 24 {
		return false
	}
	for _, w := range planWords(gap) {
		if !listJoiners[strings.ToLower(w.text)] && strings.Trim(w.text, "0123456789") != "" {
			return false
		}
	}
	for _, r := range gap {
		if isPlanWordRune(r) || unicode.IsSpace(r) {
			continue
		}
		if !strings.ContainsRune(",;`\"'*-–—>=→⇒⟶()[].:", r) {
			return false
		}
	}
	return true
}

// listItem is a Markdown list item: "- x", "* x", "+ x", "1. x", "1) x".
var listItem = regexp.MustCompile(`^([ \t]*)([-*+]|[0-9]{1,4}[.)])[ \t]+(.*)$`)

type planList struct {
	indent      int
	numbered    bool
	order       []int
	first, last int
}

// listBlocks reads the plan's lists: items at one indent and of one kind (numbered or bulleted) form a list
// until a line at that indent or less that is not such an item; deeper lines belong to the item above (and
// may be lists of their own). Each item that starts with a stage name, after Markdown emphasis and an
// optional "Stage N:", names that stage.
func listBlocks(lines []string, index map[string]int) []planList {
	var open, done []planList
	closeFrom := func(indent int) {
		for len(open) > 0 && open[len(open)-1].indent >= indent {
			done = append(done, open[len(open)-1])
			open = open[:len(open)-1]
		}
	}
	for n, raw := range lines {
		ln := strings.TrimSuffix(raw, "\r")
		if strings.TrimSpace(ln) == "" {
			continue
		}
		m := listItem.FindStringSubmatch(ln)
		if m == nil {
			closeFrom(indentOf(ln))
			continue
		}
		indent := indentOf(m[1])
		numbered := m[2][0] >= '0' && m[2][0] <= '9'
		closeFrom(indent + 1)
		if len(open) > 0 && open[len(open)-1].indent == indent && open[len(open)-1].numbered != numbered {
			closeFrom(indent)
		}
		if len(open) == 0 || open[len(open)-1].indent < indent {
			open = append(open, planList{indent: indent, numbered: numbered})
		}
		if k, ok := itemStage(m[3], index); ok {
			b := &open[len(open)-1]
			if len(b.order) == 0 {
				b.first = n + 1
			}
			b.order = append(b.order, k)
			b.last = n + 1
		}
	}
	closeFrom(0)
	return done
}

func indentOf(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// itemStage is the stage an item's text starts with: "`ingest` — hash the PDFs", "**Extract**: …",
// "Stage 3: normalize", "[ ] `anchor`.".
func itemStage(text string, index map[string]int) (int, bool) {
	const decoration = "`*_~\"'[( \t"
	// A task list's box ("- [ ] `ingest`.", "- [x] …") is part of the marker.
	for _, box := range []string{"[ ]", "[x]", "[X]"} {
		if rest, ok := strings.CutPrefix(text, box); ok {
			text = rest
			break
		}
	}
	rest := strings.TrimLeft(text, decoration)
	words := planWords(rest)
	if len(words) == 0 || words[0].start != 0 {
		return 0, false
	}
	if strings.EqualFold(words[0].text, "stage") && len(words) > 1 {
		i := 1
		if strings.Trim(words[1].text, "0123456789") == "" {
			i = 2
		}
		if i >= len(words) || strings.Trim(rest[words[i-1].end:words[i].start], decoration+":.)-–—") != "" {
			return 0, false
		}
		words = words[i:]
	}
	k, ok := index[strings.ToLower(words[0].text)]
	return k, ok
}
