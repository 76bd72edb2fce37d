// Package suggest is the one "did you mean" of runwatch: commands, flags, config keys, action names and
// values all suggest with the same measure.
package suggest

import "strings"

// Nearest returns the candidates closest to word by edit distance (adjacent swaps count one, so "stauts"
// is one step from "status"), when they are close enough to be what was meant, or that start with it.
func Nearest(word string, candidates []string) []string {
	best, bestDist := []string(nil), 0
	limit := max(1, min(2, len(word)/3))
	word = strings.ToLower(word)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(word, lc)
		if len(word) >= 2 && strings.HasPrefix(lc, word) {
			d = min(d, limit)
		}
		switch {
		case d > limit:
		case best == nil || d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions, deletions, substitutions and swaps of
// two neighbours each cost one.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
