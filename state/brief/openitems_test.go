package brief

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"runwatch/state"
)

// A run paused mid-stage (issue 27): the brief names the open items of the restart stage and of a stage
// marked done that the checklist contradicts, with their keys, and what each needs where the run's files
// say: a comment beside the key in a hand-kept checklist, the plan's text where it names the key (the whole
// list item, wrapped lines included); nothing else.
func TestBriefNamesOpenItems(t *testing.T) {
	root := t.TempDir()
	plan := filepath.Join(root, "repo", "plans", "p.md")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(plan, "# Plan\n\n## Gates\n\n- `CB_S2_VERIFY_GREEN`: `./make.py verify` passes\n  on the rewritten tree.\n"+
		"- `CB_S2_VERIFY_GREEN_LOG` is kept (not the same key).\n\nSee also CB_S3_SMOKE_RUN, run once S2 is done.\n")
	dir := filepath.Join(root, "reports", "irm-20260306T090000Z")
	write(filepath.Join(dir, "state.env"), `CURRENT_STAGE="S2"
PLAN_PATH="plans/p.md"
REPO_ROOT="`+filepath.Join(root, "repo")+`"
RUN_ID="20260306T090000Z"
S1_DONE="1"
S2_DONE="0"
S3_DONE="1"
S4_DONE="0"
`)
	write(filepath.Join(dir, "checklist.state.env"), `CB_S1_OK="1"
# written by the shadow run; the report is artifacts/s2/shadow.json
CB_S2_SHADOW_REPORT="0"
CB_S2_VERIFY_GREEN="0" # see the plan's gates
CB_S2_WRITTEN="1"
CB_S3_SMOKE_RUN="0"
CB_S4_X="0"
`)
	locs, err := state.Discover([]string{dir}, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	env := testEnv()
	b := BuildWith(state.Load(locs[0], env), env, Options{SkipGit: true})
	cl := filepath.Join(dir, "checklist.state.env")
	want := []OpenItem{
		{Stage: "S2", Key: "CB_S2_SHADOW_REPORT", Value: "0", Needs: []ItemNote{
			{Source: "checklist", File: cl, Line: 2, Text: "written by the shadow run; the report is artifacts/s2/shadow.json"}}},
		{Stage: "S2", Key: "CB_S2_VERIFY_GREEN", Value: "0", Needs: []ItemNote{
			{Source: "checklist", File: cl, Line: 4, Text: "see the plan's gates"},
			{Source: "plan", File: plan, Line: 5, Text: "`CB_S2_VERIFY_GREEN`: `./make.py verify` passes on the rewritten tree."}}},
		{Stage: "S3", Key: "CB_S3_SMOKE_RUN", Value: "0", Needs: []ItemNote{
			{Source: "plan", File: plan, Line: 9, Text: "See also CB_S3_SMOKE_RUN, run once S2 is done."}}},
	}
	if got := b.Resumable.OpenItems; !reflect.DeepEqual(got, want) {
		t.Fatalf("open items\n got %+v\nwant %+v", got, want)
	}
	md := b.Markdown()
	for _, s := range []string{
		"1 of its 3 checklist items is ticked; open: CB_S2_SHADOW_REPORT, CB_S2_VERIFY_GREEN",
		"Checklist items still open, each to make true and then tick (what each needs, where the run's files say, is " +
			"under Open checklist items): stage `S2`: `CB_S2_SHADOW_REPORT` and `CB_S2_VERIFY_GREEN`; stage `S3`: `CB_S3_SMOKE_RUN`.",
		"## Open checklist items",
		"- `CB_S2_VERIFY_GREEN` = `0` (stage `S2`):\n  - checklist.state.env, line 4: “see the plan's gates”\n" +
			"  - the plan p.md, line 5: “`CB_S2_VERIFY_GREEN`: `./make.py verify` passes on the rewritten tree.”\n",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("brief lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "CB_S4_X") {
		t.Errorf("an item of a stage the brief neither restarts nor re-verifies:\n%s", md)
	}
}
