package model

import (
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

// OrderByLog orders stage ids by their first appearance in logOrder (run.log stage_start lines); ids the log
// never mentions follow in natural order. Matching is case-insensitive. It reports whether the log decided
// anything.
func OrderByLog(ids, logOrder []string) ([]string, bool) {
	rank := map[string]int{}
	for _, s := range logOrder {
		k := strings.ToUpper(s)
		if _, seen := rank[k]; !seen {
			rank[k] = len(rank)
		}
	}
	out := append([]string(nil), ids...)
	used := false
	for _, id := range out {
		if _, ok := rank[strings.ToUpper(id)]; ok {
			used = true
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, okI := rank[strings.ToUpper(out[i])]
		rj, okJ := rank[strings.ToUpper(out[j])]
		switch {
		case okI && okJ:
			return ri < rj
		case okI != okJ:
			return okI
		}
		return NaturalLess(out[i], out[j])
	})
	return out, used
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
