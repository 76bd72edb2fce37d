package model

import (
	"slices"
	"testing"
)

// A key of one value holds it alone, and a key whose values come down to one holds it alone again; a list
// being ranged over is never changed by a Del.
func TestKeyIndexHoldsOneValueAlone(t *testing.T) {
	x := NewKeyIndex()
	values := func(key string) []string {
		one, several := x.Of(key)
		if one != "" && several != nil {
			t.Fatalf("%s: %q alone and %q", key, one, several)
		}
		if one != "" {
			return []string{one}
		}
		return several
	}
	x.Add("k", "a")
	if _, several := x.Of("k"); several != nil || !slices.Equal(values("k"), []string{"a"}) {
		t.Fatalf("one value: %q", values("k"))
	}
	x.Add("k", "b")
	x.Add("k", "c")
	_, held := x.Of("k")
	x.Del("k", "b")
	if !slices.Equal(held, []string{"a", "b", "c"}) {
		t.Errorf("Del changed a list a caller held: %q", held)
	}
	if !slices.Equal(values("k"), []string{"a", "c"}) {
		t.Errorf("after Del b: %q", values("k"))
	}
	x.Del("k", "a")
	if one, several := x.Of("k"); one != "c" || several != nil {
		t.Errorf("down to one: %q alone, %q", one, several)
	}
	x.Del("k", "x") // not filed: nothing changes
	x.Del("k", "c")
	if x.Len() != 0 || values("k") != nil {
		t.Errorf("emptied, the index holds %v %v", x.one, x.more)
	}
}
