package suggest

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	names := []string{"status", "brief", "check", "uncheck", "undo", "completion", "events", "notify"}
	for word, want := range map[string]string{
		"stauts": "status", "statsu": "status", "stat": "status", "brief": "brief", "breif": "brief",
		"chek": "check", "undoo": "undo", "completoin": "completion", "x": "", "delete": "", "STATUS": "status",
	} {
		if got := strings.Join(Nearest(word, names), ","); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestNearestIgnoresCase(t *testing.T) {
	if got := Nearest("RepoRot", []string{"RepoRoot", "RunID"}); len(got) != 1 || got[0] != "RepoRoot" {
		t.Errorf("Nearest(RepoRot) = %q", got)
	}
}
