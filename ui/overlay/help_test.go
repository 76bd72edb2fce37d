package overlay

import (
	"strings"
	"testing"
)

// TestHelpLegendListsEveryFilterTerm: the help's legend names every field filter the README names.
func TestHelpLegendListsEveryFilterTerm(t *testing.T) {
	t.Parallel()
	all := strings.Join(Legend, "\n")
	for _, term := range []string{"is:needs-you", "is:STATUS", "kind:resumable", "has:lock", "has:stale-lock", "has:error", "host:NAME", "!word"} {
		if !strings.Contains(all, term) {
			t.Errorf("the legend does not name %s", term)
		}
	}
}
