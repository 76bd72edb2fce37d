//go:build race

package heaptest

// Race is true when the race detector is built in.
const Race = true
