package remote

import (
	"testing"
	"time"
)

// Issue 37.2: every remote store is bounded in total. The process facts kept for judging locks elsewhere are
// asked for by the pids in lock files, which hosts' runs can fill with ever new ones: at most maxFacts are
// kept, the newest.
func TestElsewhereKeepsBoundedProcessFacts(t *testing.T) {
	e := NewElsewhere(SSH{}, nil)
	start := time.Now()
	const asked = 3 * maxFacts
	e.mu.Lock()
	for pid := 1; pid <= asked; pid++ {
		e.keepFact(factKey{"alpha", pid}, factAnswer{at: start.Add(time.Duration(pid) * time.Millisecond)})
	}
	e.mu.Unlock()
	if len(e.facts) != maxFacts {
		t.Fatalf("%d answers asked for, %d kept; want at most %d", asked, len(e.facts), maxFacts)
	}
	if _, ok := e.facts[factKey{"alpha", asked}]; !ok {
		t.Error("the newest answer was dropped")
	}
	if _, ok := e.facts[factKey{"alpha", 1}]; ok {
		t.Error("the oldest answer was kept")
	}
}
