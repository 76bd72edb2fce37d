package watch

import (
	"maps"
	"slices"
	"testing"
)

// A path of one run holds it as a string, a path of several as their list; the list goes back to a string
// when one run is left (issue 35).
func TestPathIndexKeepsOneRunWithoutAList(t *testing.T) {
	t.Parallel()
	x := newPathIndex()
	marked := func(key string) []string {
		into := map[string]bool{}
		x.mark(key, into)
		return slices.Sorted(maps.Keys(into))
	}
	x.add("/r/a", "/r/a/state.env")
	x.add("/r/b", "/r/b/state.env")
	if len(x.more) != 0 || len(x.one) != 2 {
		t.Fatalf("one %v more %v: a path of one run has a list", x.one, x.more)
	}
	x.add("/r/a", "/r/a/x.state.env")
	x.add("/r/a", "/r/a/y.state.env")
	if got := marked("/r/a"); !slices.Equal(got, []string{"/r/a/state.env", "/r/a/x.state.env", "/r/a/y.state.env"}) {
		t.Fatalf("marked %v", got)
	}
	x.del("/r/a", "/r/a/state.env")
	x.del("/r/a", "/r/a/y.state.env")
	if len(x.more) != 0 || x.one["/r/a"] != "/r/a/x.state.env" {
		t.Fatalf("one %v more %v after two of three went", x.one, x.more)
	}
	x.del("/r/a", "/r/a/state.env") // not there: nothing changes
	x.del("/r/a", "/r/a/x.state.env")
	x.del("/r/b", "/r/b/state.env")
	if len(x.one)+len(x.more) != 0 || len(marked("/r/a")) != 0 {
		t.Fatalf("one %v more %v after every run went", x.one, x.more)
	}
}
