package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
)

// TestStatusTableKeepsRunIDs (issue 24 point 3): on a terminal of any width the RUN column is what is cut
// last. Three runs of one task differ only in their suffix; wherever an id fits whole beside its status and
// a few letters of reason it is whole (the reason is cut first), and below that it is cut in the middle,
// keeping the suffix, so no two rows read alike. The demo prints its table at exit through the same code.
func TestStatusTableKeepsRunIDs(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	long := "waiting for a person to read the brief and answer the question the agent asked at phase 6"
	var runs []model.Run
	for _, sfx := range []string{"20261201T051800Z", "20261201T061800Z", "20261201T071800Z"} {
		runs = append(runs, model.Run{ID: "irm-id-full-backfill-" + sfx, Kind: model.KindResumable, Status: model.StatusAwaitingInput,
			CurrentStage: "S2", Stages: []model.Stage{{Key: "S2", Name: "design-verification"}}, UpdatedAt: now.Add(-time.Hour),
			Progress: model.Progress{Done: 1, Total: 4}, Attention: model.Attention{NeedsYou: true, Reason: long}})
	}
	idW := len(runs[0].ID)
	statusW := ansi.StringWidth("? awaiting-input")
	for _, wide := range []bool{false, true} {
		for width := 40; width <= 220; width++ {
			var out bytes.Buffer
			PrintTable(&out, runs, now, wide, width)
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			seen := map[string]bool{}
			for i, r := range runs {
				row := lines[1+i]
				if w := ansi.StringWidth(row); w > width {
					t.Errorf("wide=%v %d columns: a row is %d wide", wide, width, w)
				}
				cell := strings.Fields(row)[0]
				if width >= idW+2+statusW+2+6 && cell != r.ID {
					t.Errorf("wide=%v %d columns: the id is cut to %q while the reason could give way:\n%s", wide, width, cell, out.String())
				}
				if !strings.HasSuffix(cell, r.ID[len(r.ID)-7:]) {
					t.Errorf("wide=%v %d columns: %q lost the suffix that tells the runs apart", wide, width, cell)
				}
				if seen[cell] {
					t.Errorf("wide=%v %d columns: two rows read %q", wide, width, cell)
				}
				seen[cell] = true
			}
		}
	}
}
