package plural

import "testing"

func TestCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 items"}, {1, "1 item"}, {2, "2 items"}, {-1, "-1 items"}} {
		if got := Count(c.n, "item", "items"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if Word(1, "is", "are") != "is" || Word(3, "is", "are") != "are" {
		t.Error("Word does not pick by n")
	}
}

func TestAnd(t *testing.T) {
	t.Parallel()
	for want, items := range map[string][]string{"": nil, "a": {"a"}, "a and b": {"a", "b"}, "a, b and c": {"a", "b", "c"}} {
		if got := And(items); got != want {
			t.Errorf("And(%q) = %q, want %q", items, got, want)
		}
	}
}
