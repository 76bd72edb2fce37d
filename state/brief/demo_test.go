package brief

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
)

// numbered is a Markdown list item's marker, "- " or "3. ", which does not make a sentence another.
var numbered = regexp.MustCompile(`^(?:[-*] |\d+\. )`)

// sentence splits a line where one statement ends and another begins.
var sentence = regexp.MustCompile(`[.;:]\s+|\s+\[|\s+—\s+`)

// TestDemoBriefsSayEachThingOnce (issue 36, point 14): in the brief of every demo run no line says what
// another line says. A run's failed stage was said under Where to restart, Restart at, Failed stages and
// Still to do; the resume window's action under Next steps and under its own heading; a stop condition
// three times; "Awaiting human input" five. Lines are compared trimmed, without their list marker, and
// with the rest of a line that only points back ("(above)") counted as the pointer it is.
func TestDemoBriefsSayEachThingOnce(t *testing.T) {
	t.Parallel()
	ws, err := sim.NewWorkspaceWith(filepath.Join(t.TempDir(), "ws"), sim.Options{Seed: sim.DefaultSeed})
	if err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover(ws.Paths(), 6)
	if err != nil || len(locs) < 7 {
		t.Fatalf("the demo's runs: %d, %v", len(locs), err)
	}
	h := model.NewHistory()
	env := state.NewEnv(0)
	env.Now = time.Now()
	runs := make([]model.Run, len(locs))
	for i, l := range locs {
		runs[i] = state.Load(l, env)
		h.Observe(&runs[i])
	}
	for _, r := range runs {
		model.JudgeTime(&r, env.Now, model.LivenessRules{OrphanAfter: time.Second}, h)
		md := BuildWith(r, env, Options{}).Markdown()
		seen := map[string]int{}
		for i, l := range strings.Split(md, "\n") {
			l = numbered.ReplaceAllString(strings.TrimSpace(l), "")
			if strings.HasPrefix(l, "#") {
				continue
			}
			if at, ok := seen[l]; ok && len(l) > 2 {
				t.Errorf("%s: line %d is line %d again: %q", r.ID, i+1, at, l)
			}
			seen[l] = i + 1
			for _, s := range sentence.Split(l, -1) {
				s = strings.Trim(s, " ✗⚠✓–()“”`*")
				if len(s) < 24 {
					continue
				}
				if at, ok := seen[s]; ok && at != i+1 {
					t.Errorf("%s: line %d says what line %d says: %q", r.ID, i+1, at, s)
					continue
				}
				seen[s] = i + 1
			}
		}
	}
}
