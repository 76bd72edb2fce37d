// Package heaptest measures the live heap for the tests that bound what a reader keeps a run (status in cli,
// discovery in state): counted in bytes after a collection, not timed.
package heaptest

import (
	"runtime"
	"runtime/metrics"
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
