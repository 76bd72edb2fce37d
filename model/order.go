package model

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }

// SortNumericKeys sorts jonggrang phase keys ('1', '6.5', '17') by numeric value. js-yaml writes integer-like
// keys before fractional ones, so file order is not phase order. Keys that are not numbers sort last, by text.
func SortNumericKeys(keys []string) {
	sort.SliceStable(keys, func(i, j int) bool { return NumericLess(keys[i], keys[j]) })
}

// NumericLess orders decimal phase keys by value; non-numbers go last.
func NumericLess(a, b string) bool {
	fa, errA := strconv.ParseFloat(strings.TrimSpace(a), 64)
	fb, errB := strconv.ParseFloat(strings.TrimSpace(b), 64)
	switch {
	case errA == nil && errB == nil:
		if fa != fb {
			return fa < fb
		}
		return a < b
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}

// NaturalLess compares stage ids so that M2 < M10 and R9 < R9B < R10, case-insensitively.
func NaturalLess(a, b string) bool {
	ca, cb := naturalChunks(strings.ToUpper(a)), naturalChunks(strings.ToUpper(b))
	for i := 0; i < len(ca) && i < len(cb); i++ {
		x, y := ca[i], cb[i]
		if x.isNum && y.isNum {
			if x.num != y.num {
				return x.num < y.num
			}
			continue
		}
		if x.isNum != y.isNum {
			return x.isNum
		}
		if x.text != y.text {
			return x.text < y.text
		}
	}
	if len(ca) != len(cb) {
		return len(ca) < len(cb)
	}
	return a < b
}

type chunk struct {
	text  string
	num   uint64
	isNum bool
}

func naturalChunks(s string) []chunk {
	var out []chunk
	for len(s) > 0 {
		digit := unicode.IsDigit(rune(s[0]))
		i := 0
		for i < len(s) && unicode.IsDigit(rune(s[i])) == digit {
			i++
		}
		c := chunk{text: s[:i], isNum: digit}
		if digit {
			n, err := strconv.ParseUint(strings.TrimLeft(s[:i], "0")+"0", 10, 64)
			if err == nil {
				c.num = n / 10
			} else {
				// Absurdly long digit runs fall back to text order rather than overflowing.
				c.isNum = false
			}
		}
		out = append(out, c)
		s = s[i:]
	}
	return out
}

// SortNatural sorts stage ids with NaturalLess.
func SortNatural(ids []string) {
	sort.SliceStable(ids, func(i, j int) bool { return NaturalLess(ids[i], ids[j]) })
}

// StageForChecklistKey maps CB_<STAGE>_<ITEM> to the stage whose id is the longest case-insensitive prefix
// of the part after "CB_", followed by "_". For named stages the id is the stage name (CB_INGEST_* → ingest).
// Returns false for keys that are not checklist items or belong to no known stage.
func StageForChecklistKey(key string, stageIDs []string) (string, bool) {
	upper := strings.ToUpper(key)
	if !strings.HasPrefix(upper, "CB_") {
		return "", false
	}
	rest := upper[3:]
	best := ""
	for _, id := range stageIDs {
		u := strings.ToUpper(id)
		if strings.HasPrefix(rest, u+"_") && len(u) > len(best) {
			best = id
		}
	}
	return best, best != ""
}

// StageOrderRule names the stage order of the resumable runs whose task matches Pattern (a path.Match glob
// over TASK_NAME or the run folder's name), for writers that keep their order in code (docs/FORMATS.md C.1).
type StageOrderRule struct {
	Pattern string   `json:"pattern"`
	Stages  []string `json:"stages"`
}

// OrderChain is a complete order of stage ids from one source. A chain that names every stage of a run
// settles the run's order; one that names only some orders those.
type OrderChain struct {
	Source string
	IDs    []string
	// Says is the evidence sentence when the chain settles the order ("order from the plan …, line 283");
	// empty means "<Source> names every stage in order".
	Says string
	// Checked chains come from text a person wrote (a plan), not from a list kept for the purpose: one
	// settles the order only where no Next edge and no edge that is not Weak contradicts it.
	Checked bool
}

// OrderEdge says stage A comes before stage B (Next: B comes right after A).
type OrderEdge struct {
	A, B   string
	Source string
	// Weak edges come from times alone (checkpoint times, which a writer that rewrites its checkpoints
	// together can tie or invert): they do not overrule a Checked chain.
	Weak bool
}

// OrderEvidence is what is on disk (and in the config) about the order of a run's stages.
type OrderEvidence struct {
	// Chains, most trusted first: the config's stage_order, STAGE_ORDER, the bootstrap's stage_schema,
	// natural ids. The first chain that names every stage decides the whole order.
	Chains []OrderChain
	// Next edges come from `stage-complete X next=Y`, `next_stage=`, LAST_COMPLETED_STAGE → CURRENT_STAGE.
	Next []OrderEdge
	// Before edges come from the order of stage_start and stage_complete lines and checkpoint times.
	Before []OrderEdge
}

// StageOrder is the order derived from OrderEvidence.
type StageOrder struct {
	// IDs is the display order: every certain relation respected; stages whose place is unknown are put
	// where the tie-break puts them and listed in Uncertain.
	IDs []string
	// Source is the chain that settled the order, "run.log", "checkpoints", ... when one kind of evidence
	// did, "evidence" when several did, "none" when nothing did.
	Source string
	// Uncertain lists the stages whose place relative to some other stage is not known.
	Uncertain []string
	// Next maps a stage to the stage known to come right after it ("" = known to be the last stage). A
	// stage absent from Next has no known successor: nothing may be written that depends on one.
	Next map[string]string
	// Evidence says, in words, what decided the order; Conflicts what was ignored because it contradicted
	// stronger evidence.
	Evidence  []string
	Conflicts []string
}

// maxOrderedStages bounds the relation matrix. Real plans have at most a few dozen stages; past this a
// hostile file's stages are shown in tie-break order and all marked uncertain.
const maxOrderedStages = 256

// DeriveStageOrder orders ids from evidence alone. rank is the display tie-break among stages that no
// evidence orders (lower first; then stages whose place is settled, then natural order); it never decides
// Next.
func DeriveStageOrder(ids []string, ev OrderEvidence, rank func(id string) int) StageOrder {
	if rank == nil {
		rank = func(string) int { return 0 }
	}
	n := len(ids)
	o := &orderer{ids: ids, ev: ev, rank: rank, n: n, index: make(map[string]int, n),
		out: StageOrder{Source: "none", Next: map[string]string{}}}
	for i, id := range ids {
		o.index[strings.ToUpper(id)] = i
	}
	switch {
	case n == 0:
		o.out.IDs = []string{}
		return o.out
	case n == 1:
		o.out.IDs = []string{ids[0]}
		o.out.Next[ids[0]] = ""
		o.out.Source = "single stage"
		return o.out
	}
	if o.settledByChain() {
		return o.out
	}
	if n > maxOrderedStages {
		o.out.IDs = append([]string(nil), ids...)
		sort.SliceStable(o.out.IDs, func(i, j int) bool { return o.less(o.out.IDs[i], o.out.IDs[j]) })
		o.out.Uncertain = append([]string(nil), o.out.IDs...)
		o.out.Evidence = append(o.out.Evidence, fmt.Sprintf("%d stages are too many to order from evidence", n))
		return o.out
	}
	o.relate()
	certain := o.certain()
	o.nextStages()
	o.display(certain)
	o.summarise()
	return o.out
}

// orderer holds one derivation: the stages, the evidence, and the relation built from it.
type orderer struct {
	ids   []string
	ev    OrderEvidence
	rank  func(id string) int
	n     int
	index map[string]int // upper-cased id → position in ids
	out   StageOrder

	contradicted map[int]bool // chains a Next or strong edge contradicts
	rel          [][]bool     // rel[a][b]: a comes before b
	next         map[int]int  // b comes right after a
	sources      map[string]bool
}

func (o *orderer) less(a, b string) bool {
	if ra, rb := o.rank(a), o.rank(b); ra != rb {
		return ra < rb
	}
	return NaturalLess(a, b)
}

func (o *orderer) lookup(ref string) (int, bool) {
	i, ok := o.index[strings.ToUpper(strings.TrimSpace(ref))]
	return i, ok
}

// settledByChain takes the first chain that names every stage and no stronger evidence contradicts.
func (o *orderer) settledByChain() bool {
	o.contradicted = map[int]bool{}
	for ci, c := range o.ev.Chains {
		seen := map[int]bool{}
		var order []int
		for _, ref := range c.IDs {
			if i, ok := o.lookup(ref); ok && !seen[i] {
				seen[i] = true
				order = append(order, i)
			}
		}
		if len(order) != o.n {
			continue
		}
		if c.Checked {
			if why := chainContradiction(order, o.ids, o.ev, o.lookup); why != "" {
				o.contradicted[ci] = true
				o.out.Conflicts = append(o.out.Conflicts, chainSays(c)+" is not used: "+why)
				continue
			}
		}
		o.out.Source = c.Source
		o.out.Evidence = append(o.out.Evidence, chainSays(c))
		for k, i := range order {
			o.out.IDs = append(o.out.IDs, o.ids[i])
			if k+1 < o.n {
				o.out.Next[o.ids[i]] = o.ids[order[k+1]]
			} else {
				o.out.Next[o.ids[i]] = ""
			}
		}
		return true
	}
	return false
}

// add records a before b and everything that follows from it; false when the evidence already says the
// opposite.
func (o *orderer) add(a, b int, source string) bool {
	if a == b || o.rel[a][b] {
		return true
	}
	if o.rel[b][a] {
		return false
	}
	var from, to []int
	for x := 0; x < o.n; x++ {
		if x == a || o.rel[x][a] {
			from = append(from, x)
		}
		if x == b || o.rel[b][x] {
			to = append(to, x)
		}
	}
	for _, x := range from {
		for _, y := range to {
			o.rel[x][y] = true
		}
	}
	o.sources[source] = true
	return true
}

func (o *orderer) conflict(e OrderEdge, what string) {
	o.out.Conflicts = append(o.out.Conflicts, fmt.Sprintf("%s (%s) contradicts stronger evidence; ignored", what, e.Source))
}

// relate builds the relation from the evidence, strongest first: Next edges, the partial chains, Before
// edges, then what "right after" implies.
func (o *orderer) relate() {
	n, ids := o.n, o.ids
	o.rel = make([][]bool, n)
	for i := range o.rel {
		o.rel[i] = make([]bool, n)
	}
	o.sources = map[string]bool{}
	o.next = map[int]int{}
	for _, e := range o.ev.Next {
		a, okA := o.lookup(e.A)
		b, okB := o.lookup(e.B)
		if !okA || !okB || a == b {
			continue
		}
		if prev, ok := o.next[a]; ok && prev != b {
			o.conflict(e, fmt.Sprintf("%s next %s, where %s was already said to follow it", ids[a], ids[b], ids[prev]))
			continue
		}
		if !o.add(a, b, e.Source) {
			o.conflict(e, fmt.Sprintf("%s next %s", ids[a], ids[b]))
			continue
		}
		o.next[a] = b
	}
	edge := func(e OrderEdge) {
		a, okA := o.lookup(e.A)
		b, okB := o.lookup(e.B)
		if okA && okB && !o.add(a, b, e.Source) {
			o.conflict(e, fmt.Sprintf("%s before %s", ids[a], ids[b]))
		}
	}
	for ci, c := range o.ev.Chains {
		if o.contradicted[ci] {
			continue
		}
		for k := 0; k+1 < len(c.IDs); k++ {
			edge(OrderEdge{A: c.IDs[k], B: c.IDs[k+1], Source: c.Source})
		}
	}
	for _, e := range o.ev.Before {
		edge(e)
	}
	// "B right after A" also places B before everything known to follow A, and A after everything known to
	// precede B.
	for changed := true; changed; {
		changed = false
		for a, b := range o.next {
			for c := 0; c < n; c++ {
				if c == a || c == b {
					continue
				}
				if o.rel[a][c] && !o.rel[b][c] && o.add(b, c, "next") {
					changed = true
				}
				if o.rel[c][b] && !o.rel[c][a] && o.add(c, a, "next") {
					changed = true
				}
			}
		}
	}
}

// certain marks the stages whose place is settled. The stages marked uncertain are the fewest whose
// removal leaves every other pair ordered: a stage the evidence never places (finalize, never started) is
// marked, not the chain the evidence does order. Greedy: drop the stage with the fewest known relations
// among those still kept, until all are ordered.
func (o *orderer) certain() []bool {
	n := o.n
	certain := make([]bool, n)
	for i := range certain {
		certain[i] = true
	}
	for {
		worst, worstRel, open := -1, 0, false
		for i := 0; i < n; i++ {
			if !certain[i] {
				continue
			}
			related, unrelated := 0, 0
			for j := 0; j < n; j++ {
				if j == i || !certain[j] {
					continue
				}
				if o.rel[i][j] || o.rel[j][i] {
					related++
				} else {
					unrelated++
				}
			}
			if unrelated > 0 {
				open = true
				if worst < 0 || related < worstRel || (related == worstRel && o.less(o.ids[worst], o.ids[i])) {
					worst, worstRel = i, related
				}
			}
		}
		if !open {
			return certain
		}
		certain[worst] = false
	}
}

// nextStages fills out.Next with each stage's known successor: a Next edge, "" when the stage is known to
// be last, or the one stage the relation puts right after it.
func (o *orderer) nextStages() {
	n, rel, ids := o.n, o.rel, o.ids
	for i := 0; i < n; i++ {
		if b, ok := o.next[i]; ok {
			o.out.Next[ids[i]] = ids[b]
			continue
		}
		last := true
		for j := 0; j < n && last; j++ {
			if j != i && !rel[j][i] {
				last = false
			}
		}
		if last {
			o.out.Next[ids[i]] = ""
			continue
		}
		for j := 0; j < n; j++ {
			if j == i || !rel[i][j] {
				continue
			}
			ok := true
			for k := 0; k < n && ok; k++ {
				if k != i && k != j && !rel[k][i] && !rel[j][k] {
					ok = false
				}
			}
			if ok {
				o.out.Next[ids[i]] = ids[j]
				break
			}
		}
	}
}

// display is a topological order of what is known, the tie-break choosing among stages free to go next.
func (o *orderer) display(certain []bool) {
	n, ids := o.n, o.ids
	placed := make([]bool, n)
	for len(o.out.IDs) < n {
		best := -1
		for i := 0; i < n; i++ {
			if placed[i] {
				continue
			}
			free := true
			for j := 0; j < n && free; j++ {
				if !placed[j] && o.rel[j][i] {
					free = false
				}
			}
			if !free {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			ri, rb := o.rank(ids[i]), o.rank(ids[best])
			switch {
			case ri != rb:
				if ri < rb {
					best = i
				}
			case certain[i] != certain[best]:
				if certain[i] {
					best = i
				}
			case NaturalLess(ids[i], ids[best]):
				best = i
			}
		}
		placed[best] = true
		o.out.IDs = append(o.out.IDs, ids[best])
	}
	for _, id := range o.out.IDs {
		if i, _ := o.lookup(id); !certain[i] {
			o.out.Uncertain = append(o.out.Uncertain, id)
		}
	}
}

// summarise says which kinds of evidence ordered the stages.
func (o *orderer) summarise() {
	var used []string
	for s := range o.sources {
		if s != "next" {
			used = append(used, s)
		}
	}
	sort.Strings(used)
	switch len(used) {
	case 0:
	case 1:
		o.out.Source = used[0]
	default:
		o.out.Source = "evidence"
	}
	for _, s := range used {
		o.out.Evidence = append(o.out.Evidence, "order from "+s)
	}
}

func chainSays(c OrderChain) string {
	if c.Says != "" {
		return c.Says
	}
	return c.Source + " names every stage in order"
}

// chainContradiction names the first Next edge, or edge that is not Weak, that a complete chain (order, as
// indexes into ids) contradicts.
func chainContradiction(order []int, ids []string, ev OrderEvidence, lookup func(string) (int, bool)) string {
	pos := make(map[int]int, len(order))
	for k, i := range order {
		pos[i] = k
	}
	for _, e := range ev.Next {
		a, okA := lookup(e.A)
		b, okB := lookup(e.B)
		if okA && okB && a != b && pos[b] != pos[a]+1 {
			return fmt.Sprintf("%s says %s comes right after %s", e.Source, ids[b], ids[a])
		}
	}
	for _, e := range ev.Before {
		a, okA := lookup(e.A)
		b, okB := lookup(e.B)
		if !e.Weak && okA && okB && a != b && pos[a] > pos[b] {
			return fmt.Sprintf("%s says %s comes before %s", e.Source, ids[a], ids[b])
		}
	}
	return ""
}

// MatchStageOrder finds the rule whose pattern matches one of names (TASK_NAME, the run folder's name).
// Two matching rules that disagree settle nothing: ambiguous names them.
func MatchStageOrder(rules []StageOrderRule, names ...string) (rule StageOrderRule, ok bool, ambiguous []string) {
	for _, r := range rules {
		matched := false
		for _, name := range names {
			if name == "" {
				continue
			}
			if m, err := path.Match(r.Pattern, name); err == nil && m {
				matched = true
			}
		}
		if !matched {
			continue
		}
		switch {
		case !ok:
			rule, ok = r, true
		case !sameOrder(rule.Stages, r.Stages):
			ambiguous = append(ambiguous, r.Pattern)
		}
	}
	if len(ambiguous) > 0 {
		return StageOrderRule{}, false, append([]string{rule.Pattern}, ambiguous...)
	}
	return rule, ok, nil
}

func sameOrder(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}
