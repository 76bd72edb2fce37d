// Tests of the search prompts and of how the current match stands out, in the timeline and the pagers.

package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/ui/app"
)

func typeText(t *testing.T, m Model, s string) Model {
	for _, k := range s {
		m = send(t, m, press(string(k)))
	}
	return m
}

// TestSearchPromptStartsEmpty (issue 24 point 6): in the brief pager and the timeline, / opens an empty
// prompt (the last pattern kept there took what was typed as more of it), and enter on the empty prompt
// searches for the last pattern again, as in less and vim.
func TestSearchPromptStartsEmpty(t *testing.T) {
	t.Parallel()
	runList := loadFixtures(t)
	m := newTestModel(t, 140, 40, runList, app.Options{Now: fixtureClock(), Env: fixtureEnv, OpenLog: OpenIndexedLog})
	m = send(t, m, press("b"))
	pg := m.pagerOverlay()
	if pg == nil {
		t.Fatal("b opened no brief")
	}
	m = typeText(t, send(t, m, press("/")), "phase")
	m = send(t, m, press("enter"))
	if pg := m.pagerOverlay(); pg.Pattern != "phase" || pg.Hits < 2 {
		t.Fatalf("the brief's search for phase: pattern %q, %d hits", pg.Pattern, pg.Hits)
	}
	m = send(t, m, press("/"))
	if v := m.pagerOverlay().Input; v != "" {
		t.Errorf("the brief's second / starts with %q", v)
	}
	m = send(t, m, press("enter"))
	if pg := m.pagerOverlay(); pg.Pattern != "phase" || !pg.Searching {
		t.Errorf("enter on the empty prompt: pattern %q (searching %v)", pg.Pattern, pg.Searching)
	}

	m = newTestModel(t, 140, 40, runList, app.Options{Now: fixtureClock(), Env: fixtureEnv, OpenLog: OpenIndexedLog})
	for m.app.Focus != app.PaneTimeline {
		m = send(t, m, press("tab"))
	}
	m = typeText(t, send(t, m, press("/")), "phase")
	m = send(t, m, press("enter"))
	m = send(t, m, press("/"))
	if v := m.tl.LineInput(); strings.Contains(v, "phase") {
		t.Errorf("the timeline's second / starts with %q", v)
	}
	m = send(t, m, press("enter"))
	if tlPattern(t, m) != "phase" {
		t.Errorf("enter on the timeline's empty prompt searched for %q", tlPattern(t, m))
	}
}

// TestCurrentMatchStandsOut (issue 24 point 6): in the brief, the match n moved to is drawn in reverse
// video, the others underlined only, so the current one of many can be found (in colour and without).
func TestCurrentMatchStandsOut(t *testing.T) {
	t.Parallel()
	for _, th := range []string{"dark", "mono"} {
		m := newTestModel(t, 140, 40, loadFixtures(t), app.Options{Theme: th, Now: fixtureClock(), Env: fixtureEnv})
		m = send(t, m, press("b"))
		m = typeText(t, send(t, m, press("/")), "phase")
		m = send(t, m, press("enter"))
		m = send(t, m, press("n"))
		pg := m.pagerOverlay()
		if pg.Hit < 0 {
			t.Fatalf("%s: n moved to no match", th)
		}
		cur, others := 0, 0
		for _, l := range strings.Split(render(t, m, colorprofile.ANSI), "\n") {
			for _, seq := range sgrWith(l, "4") {
				if strings.Contains(";"+seq+";", ";7;") {
					cur++
				} else {
					others++
				}
			}
		}
		if cur == 0 || others == 0 {
			t.Errorf("%s: %d matches drawn as current, %d as others", th, cur, others)
		}
	}
}

// sgrWith lists the parameters of the SGR sequences in s that set parameter p.
func sgrWith(s, p string) []string {
	var out []string
	for _, part := range strings.Split(s, "\x1b[")[1:] {
		i := strings.IndexByte(part, 'm')
		if i < 0 {
			continue
		}
		if ps := part[:i]; strings.Contains(";"+ps+";", ";"+p+";") {
			out = append(out, ps)
		}
	}
	return out
}

// TestTimelineCurrentMatchStandsOut (issue 24 point 6): in the timeline as in the pagers, every visible
// match is underlined and the one n moved to (the cursor line's) is in reverse video, in colour, on a
// light background and without colour.
func TestTimelineCurrentMatchStandsOut(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("[2026-11-30T10:00:%02dZ] step %d done", i, i))
		if i%3 == 0 {
			lines = append(lines, fmt.Sprintf("  payload NEEDLE n%d", i))
		}
	}
	for _, th := range []string{"dark", "light", "mono"} {
		m := focusTimeline(t, newTestModel(t, 140, 40, []model.Run{resumableRun()}, app.Options{Theme: th, OpenLog: memOpener(lines)}))
		m = typeSearch(t, m, "/", "NEEDLE")
		m = send(t, m, press("n"))
		cursorText, _ := m.tl.CursorLine()
		if !strings.Contains(cursorText, "NEEDLE") {
			t.Fatalf("%s: n left the cursor on %q", th, cursorText)
		}
		var current []string // the screen rows holding a match drawn as current
		others := 0
		for _, row := range strings.Split(render(t, m, colorprofile.ANSI), "\n") {
			for _, part := range strings.Split(row, "\x1b[")[1:] {
				i := strings.IndexByte(part, 'm')
				if i < 0 || !strings.HasPrefix(part[i+1:], "NEEDLE") {
					continue
				}
				switch ps := ";" + part[:i] + ";"; {
				case !strings.Contains(ps, ";4;"):
					t.Errorf("%s: a match drawn without underline: %q", th, part)
				case strings.Contains(ps, ";7;"):
					current = append(current, ansi.Strip(row))
				default:
					others++
				}
			}
		}
		if len(current) != 1 || others < 2 {
			t.Fatalf("%s: %d matches drawn as current (%q), %d as others", th, len(current), current, others)
		}
		if !strings.Contains(current[0]+" ", strings.TrimSpace(cursorText)+" ") {
			t.Errorf("%s: the match drawn as current is on %q, not on the cursor line %q", th, current[0], cursorText)
		}
	}
}
