// Package heaptest measures the live heap for the tests that bound what a reader keeps a run (status in cli,
// discovery in state): counted in bytes after a collection, not timed.
package heaptest

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// Bytes is the live heap and the part of it the collector scans for pointers.
type Bytes struct{ Live, Scan uint64 }

// Now is the live heap after a collection.
func Now() Bytes {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return Bytes{s[0].Value.Uint64(), s[1].Value.Uint64()}
}

// SkipUnderRace skips a test that bounds the heap when the race detector is built in: the detector changes
// what is allocated and retained, and makes reading thousands of runs several times slower, so the bound
// means nothing there. .ci/run runs these tests without -race in a step of their own (the names it selects
// are checked by the root package's TestCIRunsEveryHeapTest).
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if Race {
		t.Skip("bounds the heap: the race detector changes what is allocated (CI runs it without -race)")
	}
}
