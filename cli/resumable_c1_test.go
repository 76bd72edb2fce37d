package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/state/brief"
	"runwatch/state/resumable/resumabletest"
)

// The fixtures of docs/FORMATS.md C.1 (testdata/resumable-c1), written the way the real writers write them.
const (
	c1Mining   = "iso26262-mining-20260301T101500Z"                     // the mining tool: lower-case stages, no stage_start
	c1Quality  = "iso26262-extraction-quality-pr1-pr1-20260302T090000Z" // S_EQ<n>_DONE with CURRENT_STAGE="EQ1"
	c1Blocked  = "iso26262-extraction-quality-pr2-pr2-20260303T090000Z" // stage_blocked + LAST_ERROR, EQ1 committed
	c1Sphinx   = "sphinx-traceability-migration-20260304T080000Z"       // C02-M3 ledger labels, another host's lock
	c1NoState  = "irm-id-full-backfill-20260305T070000Z"                // run.log, checkpoints, ledger; no state.env
	c1Pipeline = "ingest, extract, normalize, anchor, publish, verify, finalize"
)

// c1Tree copies the fixtures into a temp $OPENCODE_CONFIG_DIR and returns its reports folder and an empty
// config file (so the user's own config stays out).
func c1Tree(t *testing.T, config string) (reports, cfg string, e env) {
	t.Helper()
	root := t.TempDir()
	resumabletest.CopyDir(t, filepath.Join("..", "testdata", "resumable-c1"), root)
	cfg = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "reports"), cfg, testEnv(t, "OPENCODE_CONFIG_DIR", root)
}

func c1Status(t *testing.T, e env, reports, cfg string) map[string]model.Run {
	t.Helper()
	code, out, errOut := runCmd(e, "status", "--json", "--config", cfg, reports)
	if code != exitProblems && code != exitOK {
		t.Fatalf("status: exit %d, stderr %s", code, errOut)
	}
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	runs := map[string]model.Run{}
	for _, r := range snap.Runs {
		runs[r.ID] = r
	}
	return runs
}

func c1Brief(t *testing.T, e env, cfg, dir string) brief.Brief {
	t.Helper()
	code, out, errOut := runCmd(e, "brief", "--config", cfg, dir, "--json")
	if code != 0 {
		t.Fatalf("brief %s: exit %d, stderr %s", dir, code, errOut)
	}
	var b brief.Brief
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func stageKeysOf(r model.Run) string {
	var keys []string
	for _, s := range r.Stages {
		k := s.Key
		if s.OrderUnknown() {
			k += "?"
		}
		keys = append(keys, k)
	}
	return strings.Join(keys, ", ")
}

func c1HasProblem(r model.Run, sev model.Severity, code string, words ...string) bool {
	for _, p := range r.Problems {
		if p.Severity == sev && p.Code == code && containsAll(p.Message, words) {
			return true
		}
	}
	return false
}

func envOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// C.1 point 1: the mining tool keeps its order in code. What is on disk (checkpoint times, LAST_COMPLETED_STAGE
// → CURRENT_STAGE) orders some stages; anchor has no checkpoint and finalize was never reached, so their place
// is open. status marks them, step refuses to guess and says how to settle it, --to and the config settle it.
func TestC1StageOrderFromEvidenceOnly(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	runs := c1Status(t, e, reports, cfg)
	mining := runs[c1Mining]
	if got := stageKeysOf(mining); got != "ingest, extract, normalize, publish, anchor?, verify, finalize?" {
		t.Errorf("stages %s: the files order ingest..publish and verify after publish, nothing else", got)
	}
	if d := mining.Resumable; !d.StageOrderUncertain || d.StageOrderSource != "evidence" {
		t.Errorf("order source %q uncertain %v", d.StageOrderSource, d.StageOrderUncertain)
	}
	if !c1HasProblem(mining, model.SeverityWarning, model.CodeStageOrderUnknown, "the stage after verify is not known", "stage_order", "--to") {
		t.Errorf("problems %+v", mining.Problems)
	}

	dir := filepath.Join(reports, c1Mining)
	before := envOf(t, filepath.Join(dir, "state.env"))
	code, _, errOut := runCmd(e, "step", "--config", cfg, dir, "--yes")
	if code != exitRefused || !containsAll(errOut, []string{"the stage after verify is not known", "stage_order", "--to STAGE", "anchor", "finalize"}) {
		t.Fatalf("step without evidence: exit %d, stderr %s", code, errOut)
	}
	if envOf(t, filepath.Join(dir, "state.env")) != before {
		t.Fatal("a refused step wrote state.env")
	}
	// --to may not name a stage already done, nor an unknown one.
	if code, _, errOut = runCmd(e, "step", "--config", cfg, dir, "--to", "publish", "--yes"); code != exitRefused || !strings.Contains(errOut, "already marked done") {
		t.Errorf("--to a done stage: exit %d, stderr %s", code, errOut)
	}
	if code, _, errOut = runCmd(e, "step", "--config", cfg, dir, "--to", "nowhere", "--yes"); code != exitRefused || !strings.Contains(errOut, "not one of the run's stages") {
		t.Errorf("--to an unknown stage: exit %d, stderr %s", code, errOut)
	}
	// The person names the next stage: written in the file's spelling (lower case), with the mining tool's
	// reopen warning for verify, whose checkpoint runwatch does not write.
	code, out, errOut := runCmd(e, "step", "--config", cfg, dir, "--to", "FINALIZE", "--yes")
	if code != 0 {
		t.Fatalf("step --to: exit %d, stderr %s", code, errOut)
	}
	if !strings.Contains(out, "warning: verify is marked done but") || !strings.Contains(out, "the tool will reopen this stage on its next start") {
		t.Errorf("step's confirmation lacks the reopen warning:\n%s", out)
	}
	st := envOf(t, filepath.Join(dir, "state.env"))
	for _, want := range []string{`CURRENT_STAGE="finalize"`, `LAST_COMPLETED_STAGE="verify"`, `S_VERIFY_DONE="1"`} {
		if !strings.Contains(st, want) {
			t.Errorf("state.env lacks %s:\n%s", want, st)
		}
	}
	if log := envOf(t, filepath.Join(dir, "run.log")); !strings.Contains(log, "stage_complete stage=verify next=finalize") {
		t.Errorf("run.log:\n%s", log)
	}
}

func TestC1StageOrderFromConfig(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "stage_order:\n  \"iso26262-mining*\": ["+c1Pipeline+"]\n")
	runs := c1Status(t, e, reports, cfg)
	mining := runs[c1Mining]
	if got := stageKeysOf(mining); got != c1Pipeline || mining.Resumable.StageOrderSource != "config" {
		t.Errorf("with stage_order: stages %s source %s", got, mining.Resumable.StageOrderSource)
	}
	dir := filepath.Join(reports, c1Mining)
	// --to may not contradict what is known.
	if code, _, errOut := runCmd(e, "step", "--config", cfg, dir, "--to", "anchor", "--yes"); code != exitRefused || !strings.Contains(errOut, "already marked done") {
		t.Errorf("exit %d stderr %s", code, errOut)
	}
	if code, _, errOut := runCmd(e, "step", "--config", cfg, dir, "--yes"); code != 0 {
		t.Fatalf("step with stage_order: exit %d, stderr %s", code, errOut)
	}
	if st := envOf(t, filepath.Join(dir, "state.env")); !strings.Contains(st, `CURRENT_STAGE="finalize"`) {
		t.Errorf("state.env:\n%s", st)
	}
	// A bad glob is reported at load with the file and line.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("stage_order:\n  \"[mining\": [a, b]\n"), 0o644)
	if code, _, errOut := runCmd(e, "status", "--config", bad, reports); code != exitUsage || !containsAll(errOut, []string{bad, "line 2", "not a valid glob"}) {
		t.Errorf("bad glob: exit %d stderr %s", code, errOut)
	}
}

// C.1 point 2: checkpoints are shown per stage; a done stage without one is flagged for the mining tool.
func TestC1CheckpointsPerStage(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	mining := c1Status(t, e, reports, cfg)[c1Mining]
	for _, s := range mining.Stages {
		switch s.Key {
		case "ingest", "extract", "normalize", "publish":
			if s.Checkpoint == nil || s.Checkpoint.Timestamp == nil || s.CompletedAt == nil || len(s.Warnings()) != 0 {
				t.Errorf("%s: checkpoint %+v completed_at %v warnings %v", s.Key, s.Checkpoint, s.CompletedAt, s.Warnings())
			}
		case "anchor":
			if s.Checkpoint != nil || len(s.Warnings()) != 1 || !strings.Contains(s.Warnings()[0], "reopen this stage on its next start") ||
				!strings.Contains(s.Warnings()[0], "anchor.done.json") {
				t.Errorf("anchor: checkpoint %+v warnings %v", s.Checkpoint, s.Warnings())
			}
		}
	}
	if !mining.Resumable.ReopensWithoutCheckpoint || !c1HasProblem(mining, model.SeverityWarning, model.CodeCheckpointMissing, "anchor") {
		t.Errorf("problems %+v", mining.Problems)
	}
	// Writers that do not reopen stages (no CONTROL_RUN_ROOT) get no such warning.
	if q := c1Status(t, e, reports, cfg)[c1Quality]; q.Resumable.ReopensWithoutCheckpoint || len(q.Problems) != 0 {
		t.Errorf("quality run problems %+v", q.Problems)
	}
}

// C.1 points 3 and 8: EQ1 stays EQ1 everywhere, and step keeps LAST_RESUME_HINT / RESUME_TARGET_STAGE true.
// RUN may be the state's RUN_ID.
func TestC1SpellingAndHints(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	q := c1Status(t, e, reports, cfg)[c1Quality]
	if q.CurrentStage != "EQ1" || stageKeysOf(q) != "EQ0, EQ1, EQ2, EQ3" || q.Stages[1].DoneKey != "S_EQ1_DONE" {
		t.Errorf("current %q stages %s", q.CurrentStage, stageKeysOf(q))
	}
	code, out, errOut := runCmd(e, "step", "--config", cfg, "pr1-20260302T090000Z", "--yes")
	if code != 0 {
		t.Fatalf("step by RUN_ID: exit %d stderr %s", code, errOut)
	}
	st := envOf(t, filepath.Join(reports, c1Quality, "state.env"))
	for _, want := range []string{`CURRENT_STAGE="EQ2"`, `LAST_COMPLETED_STAGE="EQ1"`, `S_EQ1_DONE="1"`,
		`RESUME_TARGET_STAGE="EQ2"`, `LAST_RESUME_HINT="Resume from EQ2"`} {
		if !strings.Contains(st, want) {
			t.Errorf("state.env lacks %s:\n%s", want, st)
		}
	}
	if strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("unexpected warning:\n%s", out)
	}
	if log := envOf(t, filepath.Join(reports, c1Quality, "run.log")); !strings.Contains(log, "stage_complete stage=EQ1 next=EQ2") {
		t.Errorf("run.log:\n%s", log)
	}
	b := c1Brief(t, e, cfg, filepath.Join(reports, c1Quality))
	for _, s := range b.Steps {
		if strings.Contains(s, "disagrees") {
			t.Errorf("after step the brief still finds a stale hint: %s", s)
		}
	}
	if b.Restart == nil || b.Restart.Key != "EQ2" {
		t.Errorf("restart %+v", b.Restart)
	}
}

// C.1 point 4: stage_blocked as the latest word on the current stage, and LAST_ERROR, are a stop condition.
// C.1 point 5: EQ1's commit in the stage ledger puts the resume window at B.
func TestC1BlockedStageAndLedgers(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	runs := c1Status(t, e, reports, cfg)
	r := runs[c1Blocked]
	eq1 := r.Stage("EQ1")
	if r.Status != model.StatusBlocked || eq1.Status != model.StageFailed ||
		!containsAll(eq1.ErrorText(), []string{"clause_recall, table_recall", "LAST_ERROR=metric gate failed"}) {
		t.Errorf("status %s EQ1 %+v", r.Status, eq1)
	}
	if r.Attention.Code != model.AttentionStageBlocked || !r.Attention.NeedsYou {
		t.Errorf("attention %+v", r.Attention)
	}
	if d := r.Resumable; d.Blocked == nil || strings.Join(d.Blocked.FailedMetrics, ",") != "clause_recall,table_recall" || d.LastError == "" {
		t.Errorf("blocked %+v last error %q", d.Blocked, d.LastError)
	}
	b := c1Brief(t, e, cfg, filepath.Join(reports, c1Blocked))
	found := false
	for _, c := range b.StopConditions {
		found = found || c.Code == model.CodeStageBlocked && strings.Contains(c.Message, "clause_recall")
	}
	if !found || b.Resumable.Window.Code != "B" || !strings.Contains(strings.Join(b.Resumable.Window.Evidence, ";"), "stage-commit-ledger.json records commit 2b1b2c3") {
		t.Errorf("stop conditions %+v window %+v", b.StopConditions, b.Resumable.Window)
	}
	if md := runBriefMarkdown(t, e, cfg, filepath.Join(reports, c1Blocked)); !strings.Contains(md, "fix what its gate measured") {
		t.Errorf("brief lacks the advice for a blocked stage:\n%s", md)
	}

	// record_phase_commit.py's labels: C01-M0-M1 names two stages, C03-M3 the restart stage M3.
	s := runs[c1Sphinx]
	if l := s.Resumable.Ledger; len(l) != 3 || strings.Join(l[0].Stages, ",") != "M0,M1" || strings.Join(l[2].Stages, ",") != "M3" {
		t.Errorf("ledger %+v", l)
	}
	b = c1Brief(t, e, cfg, filepath.Join(reports, c1Sphinx))
	if b.Resumable.Window.Code != "B" || !strings.Contains(strings.Join(b.Resumable.Window.Evidence, ";"), "(C03-M3)") {
		t.Errorf("window %+v", b.Resumable.Window)
	}
}

func runBriefMarkdown(t *testing.T, e env, cfg, dir string) string {
	t.Helper()
	code, out, errOut := runCmd(e, "brief", "--config", cfg, dir)
	if code != 0 {
		t.Fatalf("brief: exit %d stderr %s", code, errOut)
	}
	return out
}

// C.1 point 6: a run folder that travelled without its state.env is a run with state-file-missing, in
// status and in a brief built from run.log, checkpoints and the ledger.
func TestC1RunWithoutStateFile(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	r, ok := c1Status(t, e, reports, cfg)[c1NoState]
	if !ok {
		t.Fatal("the folder without state.env is not listed")
	}
	if r.Status != model.StatusBlocked || !c1HasProblem(r, model.SeverityError, model.CodeStateMissing, "state.env") {
		t.Errorf("status %s problems %+v", r.Status, r.Problems)
	}
	if got := stageKeysOf(r); got != "S1, S2" || r.Stage("S1").Status != model.StageCompleted || r.Stage("S1").Checkpoint == nil {
		t.Errorf("stages %s: from the checkpoint and run.log's next_stage", got)
	}
	b := c1Brief(t, e, cfg, filepath.Join(reports, c1NoState))
	if b.Restart == nil || b.Restart.Key != "S2" || !strings.Contains(strings.Join(b.Steps, "\n"), "built from run.log, checkpoints and ledgers") {
		t.Errorf("restart %+v steps %q", b.Restart, b.Steps)
	}
	for _, a := range b.Resumable.Artifacts.Missing {
		t.Errorf("artifact recorded on the other machine reported missing though it travelled: %+v", a)
	}
	// Nothing can be stepped without the state file.
	if code, _, errOut := runCmd(e, "step", "--config", cfg, filepath.Join(reports, c1NoState), "--yes"); code != exitRefused || !strings.Contains(errOut, "state.env") {
		t.Errorf("step: exit %d stderr %s", code, errOut)
	}
}

// C.1 point 8: the refusal for a lock whose liveness is unknown names the command that works.
func TestC1UnknownLockRefusalNamesTheWayOut(t *testing.T) {
	t.Parallel()
	reports, cfg, e := c1Tree(t, "")
	dir := filepath.Join(reports, c1Sphinx)
	code, _, errOut := runCmd(e, "step", "--config", cfg, dir, "--yes")
	lock := filepath.Join(dir, "run.lock")
	if code != exitRefused || !containsAll(errOut, []string{"runwatch unlock " + c1Sphinx + " " + lock + " --force", "build-07"}) {
		t.Fatalf("exit %d stderr %s", code, errOut)
	}
	if code, _, errOut := runCmd(e, "unlock", "--config", cfg, c1Sphinx, lock, "--force", "--yes"); code != 0 {
		t.Fatalf("the named command fails: exit %d stderr %s", code, errOut)
	}
}

// appendLog writes one line in its own write, as a shell printf per line does.
func appendLog(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// C.1 point 9: continuation lines appended by later writes stay with their entry. Two cases: the entry was
// printed earlier in this stream (S1 complete, then next_stage later), and it was written before the stream
// began (the bootstrap line, whose run_id continuation arrives after events started).
func TestC1EventsContinuationLinesWrittenLater(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := eventsRun(t, filepath.Join(root, "irm-20260301T000000Z"), "S1")
	log := filepath.Join(dir, "run.log")
	s := startEvents(t, testEnv(t), root)
	s.next("watch-health", ofType("watch-health"))

	appendLog(t, log, "  run_id=r1")
	first := s.next("log-appended", ofType("log-appended"))
	entries, _ := first["entries"].([]any)
	e0, _ := entries[0].(map[string]any)
	if first["continued"] != true || e0["message"] != "run bootstrapped" || e0["time"] != "2026-02-15T01:50:43Z" ||
		fmt.Sprint(e0["continuation"]) != "[  run_id=r1]" {
		t.Fatalf("a continuation of an entry from before the stream: %v", first)
	}

	appendLog(t, log, "[2026-03-01T00:00:00Z] S1 complete")
	s.next("the S1 entry", func(m map[string]any) bool {
		return m["type"] == "log-appended" && strings.Contains(fmt.Sprint(m["entries"]), "S1 complete")
	})
	appendLog(t, log, "  next_stage=S2")
	later := s.next("the continuation", ofType("log-appended"))
	entries, _ = later["entries"].([]any)
	e0, _ = entries[0].(map[string]any)
	if later["continued"] != true || len(entries) != 1 || e0["message"] != "S1 complete" || e0["time"] != "2026-03-01T00:00:00Z" {
		t.Fatalf("continuation line written later: %v", later)
	}
	for _, m := range s.seen {
		if m["type"] != "log-appended" {
			continue
		}
		for _, e := range m["entries"].([]any) {
			if t0 := e.(map[string]any)["time"]; t0 == "0001-01-01T00:00:00Z" {
				t.Errorf("an entry with a zero time: %v", m)
			}
		}
	}
}
