// Package plural is the one rule for a count and its noun in runwatch's messages: "1 item", "2 items",
// never "item(s)"; and for a list in a sentence: "a, b and c".
package plural

import (
	"strconv"
	"strings"
)

// Word picks one when n is 1 and many otherwise ("is"/"are", "lock"/"locks").
func Word(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count says n with its noun: Count(1, "item", "items") is "1 item", Count(0, …) is "0 items".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}

// And joins items as a sentence does: "a", "a and b", "a, b and c".
func And(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
