package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The mining tool sets LAST_UPDATED_AT_UTC on every save of state.env (docs/FORMATS.md C.1). Every runwatch write
// to a file holding it sets it too, in the spelling and quoting the file already uses, and the confirmation's
// diff shows it; a file without the key does not get one; undo restores the bytes exactly, stamp included.
func TestWritesKeepTheWritersTimestamp(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "reports", "iso26262-mining-20260215T143525Z")
	state := `CURRENT_STAGE="anchor"
LAST_UPDATED_AT_UTC="2026-02-15T14:37:31Z"
LOCK_FILE="lock/active.lock"
RUN_ID="20260215T143525Z"
STAGE_ORDER="ingest,extract,normalize,anchor,publish,verify,finalize"
S_ANCHOR_DONE="0"
S_EXTRACT_DONE="1"
S_FINALIZE_DONE="0"
S_INGEST_DONE="1"
S_NORMALIZE_DONE="1"
S_PUBLISH_DONE="0"
S_VERIFY_DONE="0"
`
	mustWrite(t, filepath.Join(dir, "state.env"), state)
	// A hand-kept checklist spelling its stamp the compact way, unquoted.
	mustWrite(t, filepath.Join(dir, "checklist.state.env"), "CB_ANCHOR_LINKS_WRITTEN=\"0\"\nCB_PUBLISH_INDEX_WRITTEN=\"0\"\nLAST_UPDATED_AT_UTC=20260215T143731Z\n")
	mustWrite(t, filepath.Join(dir, "run.log"), "[2026-02-15T14:35:25Z] run_bootstrap mode=kickoff-new\n")
	os.MkdirAll(filepath.Join(dir, "lock"), 0o755)
	o := opts(t, fixedEnv())
	sp := filepath.Join(dir, "state.env")
	cp := filepath.Join(dir, "checklist.state.env")

	p, err := PlanCheck(load(t, sp, o.Env), "CB_ANCHOR_LINKS_WRITTEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Preview(), "+LAST_UPDATED_AT_UTC=20261130T010203Z") {
		t.Errorf("check's confirmation does not show the stamp:\n%s", p.Preview())
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, cp); got != "CB_ANCHOR_LINKS_WRITTEN=\"1\"\nCB_PUBLISH_INDEX_WRITTEN=\"0\"\nLAST_UPDATED_AT_UTC=20261130T010203Z\n" {
		t.Errorf("checklist after check:\n%s", got)
	}
	if mustRead(t, sp) != state {
		t.Error("check wrote state.env")
	}

	p, err = PlanStep(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Preview(), `+LAST_UPDATED_AT_UTC="2026-11-30T01:02:03Z"`) {
		t.Errorf("step's confirmation does not show the stamp:\n%s", p.Preview())
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	stepped := mustRead(t, sp)
	for _, want := range []string{`CURRENT_STAGE="publish"`, `S_ANCHOR_DONE="1"`, `LAST_UPDATED_AT_UTC="2026-11-30T01:02:03Z"`} {
		if !strings.Contains(stepped, want) {
			t.Errorf("state.env after step lacks %s:\n%s", want, stepped)
		}
	}

	// Undo puts back the bytes the step replaced, the writer's own stamp with them: they are what the writer
	// wrote at that time, and undo's promise is the file exactly as it was.
	p, err = PlanUndo(load(t, sp, o.Env), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, sp) != state {
		t.Errorf("undo did not restore state.env exactly:\n%s", mustRead(t, sp))
	}

	// A file that does not keep the stamp does not get one; a stamp in no known spelling is replaced in the
	// mining tool's, with a warning.
	mustWrite(t, cp, "CB_ANCHOR_LINKS_WRITTEN=\"1\"\nCB_PUBLISH_INDEX_WRITTEN=\"0\"\n")
	p, err = PlanCheck(load(t, sp, o.Env), "CB_PUBLISH_INDEX_WRITTEN", true, o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.Files[0].New), "LAST_UPDATED_AT_UTC") {
		t.Errorf("a stamp was added to a file that had none:\n%s", p.Files[0].New)
	}
	mustWrite(t, sp, strings.Replace(state, "2026-02-15T14:37:31Z", "yesterday", 1))
	p, err = PlanStep(load(t, sp, o.Env), "", o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Files[0].New), `LAST_UPDATED_AT_UTC="2026-11-30T01:02:03Z"`) ||
		len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], `held "yesterday"`) {
		t.Errorf("unknown spelling: warnings %q\n%s", p.Warnings, p.Files[0].New)
	}
}
