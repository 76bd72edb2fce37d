package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/text"
)

// fixtureWorkspace copies both fixture trees into a temp dir, with this host's name and a dead pid filled in.
func fixtureWorkspace(t *testing.T) (jonggrangRoot, opencodeRoot string) {
	t.Helper()
	jonggrangRoot = filepath.Join(t.TempDir(), "app")
	if err := os.CopyFS(jonggrangRoot, os.DirFS("../testdata/jonggrang")); err != nil {
		t.Fatal(err)
	}
	return jonggrangRoot, resumabletest.Copy(t)
}

func runStatusJSON(t *testing.T, paths ...string) (model.Snapshot, map[string]any, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := dispatch(append([]string{"status", "--json"}, paths...), &out, &errOut, testEnv(t))
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s\nstderr: %s", err, out.String(), errOut.String())
	}
	var raw map[string]any
	_ = json.Unmarshal(out.Bytes(), &raw)
	return snap, raw, code, errOut.String()
}

func findRun(t *testing.T, snap model.Snapshot, id string) model.Run {
	t.Helper()
	for _, r := range snap.Runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("run %s not in output", id)
	return model.Run{}
}

func TestStatusJSONOnEveryFixture(t *testing.T) {
	t.Parallel()
	jg, oc := fixtureWorkspace(t)
	snap, raw, code, stderr := runStatusJSON(t, jg, filepath.Join(oc, "reports"))
	if code != exitProblems {
		t.Errorf("exit %d, want 1: fixtures include blocked runs (stderr %s)", code, stderr)
	}
	if snap.Schema != 1 || snap.Host == "" || snap.GeneratedAt.IsZero() {
		t.Errorf("header: schema %d host %q generated %v", snap.Schema, snap.Host, snap.GeneratedAt)
	}
	// The documented field names, exactly.
	run0 := raw["runs"].([]any)[0].(map[string]any)
	for _, field := range []string{"id", "kind", "dir", "title", "status", "raw_status", "current_stage", "progress",
		"stages", "flags", "locks", "problems", "updated_at", "log"} {
		if _, ok := run0[field]; !ok {
			t.Errorf("run JSON lacks %q", field)
		}
	}

	login := findRun(t, snap, "add-login-form-mlop4860")
	if login.Kind != model.KindJonggrang || login.Title != "Add login form with validation" || login.CurrentStage != "10" {
		t.Errorf("login run: %+v", login)
	}
	var keys []string
	for _, s := range login.Stages {
		keys = append(keys, s.Key)
	}
	if got := strings.Join(keys, " "); !strings.Contains(got, "6 6.5 7") || !strings.HasPrefix(got, "1 2 3") || !strings.HasSuffix(got, "16 17") {
		t.Errorf("phase order %s: want numeric with 6.5 between 6 and 7", got)
	}
	if login.Progress != (model.Progress{Done: 10, Total: 18}) {
		t.Errorf("login progress %+v, want 10/18 (phases 1-9 and 6.5 completed)", login.Progress)
	}
	verdicts := map[string]model.Verdict{}
	for _, l := range login.Locks {
		verdicts[filepath.Base(l.Path)] = l.Verdict
		if len(l.Reasons) == 0 {
			t.Errorf("lock %s has no reasons", l.Path)
		}
	}
	if verdicts["reviewer-old.lock"] != model.VerdictStale || verdicts["broken.lock"] != model.VerdictStale || verdicts["no-ts.lock"] != model.VerdictUnknown {
		t.Errorf("lock verdicts %v", verdicts)
	}

	if r := findRun(t, snap, "new-billing-mlopa001"); r.Status != model.StatusAwaitingInput {
		t.Errorf("new-billing status %s, want awaiting-input", r.Status)
	}
	if r := findRun(t, snap, "fix-typo-mlop9zz1"); r.Status != model.StatusCompleted || r.CurrentStage != "" {
		t.Errorf("fix-typo: status %s current %q", r.Status, r.CurrentStage)
	}

	sphinx := findRun(t, snap, resumabletest.Sphinx)
	if sphinx.Status != model.StatusBlocked || !hasProblem(sphinx, model.CodeStageDoneChecklistIncomplete, "CB_M3_NO_LEGACY_TOKENS") {
		t.Errorf("sphinx: status %s problems %+v", sphinx.Status, sphinx.Problems)
	}
	if len(sphinx.Locks) != 1 || sphinx.Locks[0].Verdict != model.VerdictUnknown || !strings.Contains(sphinx.Locks[0].Reasons[0], "held on other-host") {
		t.Errorf("sphinx lock %+v, want unknown held on other-host", sphinx.Locks)
	}

	mining := findRun(t, snap, resumabletest.Mining)
	var order []string
	for _, s := range mining.Stages {
		order = append(order, s.Key)
	}
	if got := strings.Join(order, " "); got != "ingest extract normalize anchor publish verify finalize" {
		t.Errorf("named stages ordered %q, want run.log order", got)
	}
	if len(mining.Locks) != 1 || mining.Locks[0].Verdict != model.VerdictStale || mining.Status != model.StatusStalled {
		t.Errorf("mining: status %s locks %+v; want stalled with the dead-pid lock stale", mining.Status, mining.Locks)
	}

	if r := findRun(t, snap, resumabletest.Broken); r.Status != model.StatusBlocked || !hasProblem(r, model.CodeStateUnparsable, "state.env") {
		t.Errorf("broken state: %s %+v", r.Status, r.Problems)
	}
	if r := findRun(t, snap, "torn-write-mlopbad1"); !hasProblem(r, model.CodeManifestUnparsable, "MANIFEST.yaml") {
		t.Errorf("torn manifest problems %+v", r.Problems)
	}
	if r := findRun(t, snap, resumabletest.Archived); !r.Archived {
		t.Error("reset folder not archived")
	}
}

func hasProblem(r model.Run, code, mention string) bool {
	for _, p := range r.Problems {
		if p.Code == code && strings.Contains(p.Message, mention) {
			return true
		}
	}
	return false
}

func TestStatusExitCodes(t *testing.T) {
	t.Parallel()
	_, oc := fixtureWorkspace(t)
	if _, _, code, _ := runStatusJSON(t, resumabletest.Run(oc, resumabletest.IRM)); code != exitOK {
		t.Errorf("a healthy paused run: exit %d, want 0", code)
	}
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"status", "--no-such-flag"}, &out, &errOut, testEnv(t)); code != exitUsage {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
	if code := dispatch([]string{"status", filepath.Join(oc, "absent")}, &out, &errOut, testEnv(t)); code != exitUsage || !strings.Contains(errOut.String(), "absent") {
		t.Errorf("missing path: exit %d, stderr %q", code, errOut.String())
	}
}

func TestStatusTableSanitisesRunText(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "evil-run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// CURRENT_STAGE is rendered in the STAGE column and, being unknown, in the problem message too.
	state := "CURRENT_STAGE=\"\x1b]0;pwned\x07\x1b[2JS9\"\nS1_DONE=\"0\"\nTASK_NAME=\"x\"\n"
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	dispatch([]string{"status", dir}, &out, &errOut, testEnv(t))
	if strings.ContainsRune(out.String(), 0x1b) {
		t.Fatalf("table output carries an escape sequence: %q", out.String())
	}
	if !strings.Contains(out.String(), "evil-run") || !strings.Contains(out.String(), "S9") {
		t.Fatalf("run missing from table:\n%s", out.String())
	}
}

// readBytes is this process's rchar from /proc/self/io: every byte read through read(2), cache hit or not.
func readBytes(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			var n int64
			for _, c := range v {
				n = n*10 + int64(c-'0')
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// A status over many runs must cost what the state files cost, not what the logs cost: logs grow to
// gigabytes. Byte counts, not timings, so the test is stable on a busy machine.
func TestStatusOnThousandRunsNeverReadsWholeLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,000 run roots")
	}
	dir := t.TempDir()
	paths, err := sim.GenerateRuns(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const logSize = 8 << 20
	var logBytes int64
	for _, p := range paths {
		log := filepath.Join(filepath.Dir(p), "run.log")
		if _, err := os.Stat(log); err != nil {
			continue
		}
		// Sparse growth: 8 MiB a log on paper, almost nothing on disk.
		if err := os.Truncate(log, logSize); err != nil {
			t.Fatal(err)
		}
		logBytes += logSize
	}
	if logBytes < 400*logSize {
		t.Fatalf("only %d bytes of logs generated; the generator changed", logBytes)
	}
	// rchar counts what the process's reaped children read too: the suite's background build of the binary
	// must be over before the count starts.
	realBinary(t)
	before := readBytes(t)
	var out, errOut bytes.Buffer
	dispatch([]string{"status", "--json", dir}, &out, &errOut, testEnv(t))
	read := readBytes(t) - before
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil || len(snap.Runs) != 1000 {
		t.Fatalf("status listed %d runs (err %v, stderr %s)", len(snap.Runs), err, errOut.String())
	}
	t.Logf("status over 1,000 runs read %d KiB; logs hold %d MiB", read>>10, logBytes>>20)
	// Named-stage runs may read a bounded head and tail window of their log for stage order; a log read in
	// full costs all 8 MiB of it.
	if read > logBytes/8 {
		t.Fatalf("status read %d bytes for %d bytes of logs: some log is read in full", read, logBytes)
	}
}

// C1 controls, DEL, zero-width characters and bidi overrides pass through encoding/json raw; runwatch's JSON
// escapes them, so a --json piped to a terminal stays inert and shows what hides there, while a parser still
// reads the exact text.
func TestJSONOutputEscapesC1AndBidi(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "c1-run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	title := "csi\u009b2J osc\u009d0;x\u009c rlo\u202egnp.exe lri\u2066x\u2069 del\x7f zw\u200b zwnj\u200c zwj\u200d wj\u2060 bom\ufeff"
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte("CURRENT_STAGE=\"S1\"\nS1_DONE=\"0\"\nTASK_NAME=\""+title+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", "--json", dir}, {"events", "--timeout", "200ms", dir}} {
		var out, errOut bytes.Buffer
		dispatch(args, &out, &errOut, testEnv(t))
		for _, r := range []rune{0x9b, 0x9d, 0x9c, 0x202e, 0x2066, 0x2069, 0x7f, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff} {
			if strings.ContainsRune(out.String(), r) {
				t.Errorf("%s: output carries U+%04X raw", args[0], r)
			}
		}
		first := strings.SplitN(out.String(), "\n{", 2)[0]
		var decoded struct {
			Runs []model.Run `json:"runs"`
			Run  model.Run   `json:"run"`
		}
		if err := json.Unmarshal([]byte(first), &decoded); err != nil {
			t.Fatalf("%s: not JSON: %v", args[0], err)
		}
		got := decoded.Run.Title
		if len(decoded.Runs) > 0 {
			got = decoded.Runs[0].Title
		}
		if got != title {
			t.Errorf("%s: title decodes as %q, want %q", args[0], got, title)
		}
	}
}

// status lists runs in the dashboard's order, by model.Judge's rank, with its reason, and -o json, -o jsonl
// and --json agree on that order and carry the attention object.
func TestStatusSpeaksLikeTheDashboard(t *testing.T) {
	t.Parallel()
	jg, oc := fixtureWorkspace(t)
	reports := filepath.Join(oc, "reports")
	snap, raw, _, _ := runStatusJSON(t, jg, reports)
	for i := 1; i < len(snap.Runs); i++ {
		a, b := snap.Runs[i-1].Attention, snap.Runs[i].Attention
		if a.Rank > b.Rank || (a.Rank == b.Rank && snap.Runs[i-1].ID > snap.Runs[i].ID) {
			t.Errorf("run %d (%s, rank %d) comes before %s (rank %d)", i-1, snap.Runs[i-1].ID, a.Rank, snap.Runs[i].ID, b.Rank)
		}
	}
	if first := snap.Runs[0]; !first.Attention.NeedsYou || first.Status != model.StatusStalled {
		t.Errorf("first run %s is %s, needs_you %v: a stalled run must lead", first.ID, first.Status, first.Attention.NeedsYou)
	}
	att := raw["runs"].([]any)[0].(map[string]any)["attention"].(map[string]any)
	for _, field := range []string{"needs_you", "rank", "code", "reason", "action", "command"} {
		if _, ok := att[field]; !ok {
			t.Errorf("attention JSON lacks %q: %v", field, att)
		}
	}

	code, table, _ := run(t, "status", jg, reports)
	if code != exitProblems {
		t.Errorf("table: exit %d, want 1 (blocked fixtures)", code)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if !strings.HasPrefix(lines[0], "RUN ") || !strings.Contains(lines[0], "REASON") {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines) != len(snap.Runs)+1 {
		t.Fatalf("%d table lines for %d runs:\n%s", len(lines), len(snap.Runs), table)
	}
	for i, r := range snap.Runs {
		// Piped, nothing is cut: the whole id and the whole reason are there.
		if !strings.HasPrefix(lines[i+1], r.ID+" ") || !strings.HasSuffix(lines[i+1], text.Sanitize(r.Attention.Reason)) {
			t.Errorf("line %d is not run %s ending in its reason %q:\n%s", i+1, r.ID, r.Attention.Reason, lines[i+1])
		}
	}
	if strings.ContainsAny(table, "\x1b…") {
		t.Errorf("piped table carries escapes or cut cells:\n%s", table)
	}

	_, jsonl, _ := run(t, "status", "-o", "jsonl", jg, reports)
	jl := strings.Split(strings.TrimSpace(jsonl), "\n")
	if len(jl) != len(snap.Runs) {
		t.Fatalf("jsonl: %d lines for %d runs", len(jl), len(snap.Runs))
	}
	for i, line := range jl {
		var r model.Run
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.ID != snap.Runs[i].ID || r.Attention != snap.Runs[i].Attention {
			t.Errorf("jsonl line %d: %v, id %q, want %q", i, err, r.ID, snap.Runs[i].ID)
		}
	}
	_, alias, _ := run(t, "status", "--json", jg, reports)
	_, long, _ := run(t, "status", "--output", "json", jg, reports)
	if idsOf(t, alias) != idsOf(t, long) || idsOf(t, long) == "" {
		t.Errorf("--json and --output json differ: %s / %s", idsOf(t, alias), idsOf(t, long))
	}

	_, wide, _ := run(t, "status", "-o", "wide", jg, reports)
	head := strings.Fields(strings.SplitN(wide, "\n", 2)[0])
	if strings.Join(head, " ") != "RUN KIND STATUS STAGE PROGRESS LOCK UPDATED REASON NEXT PROBLEMS DIR" {
		t.Errorf("wide header %v", head)
	}
	if !strings.Contains(wide, snap.Runs[0].Attention.Command) || !strings.Contains(wide, snap.Runs[0].Dir) {
		t.Errorf("wide lacks the first run's command or folder:\n%s", wide)
	}
}

// idsOf is a status document's runs in order, with their attention codes.
func idsOf(t *testing.T, doc string) string {
	t.Helper()
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(doc), &snap); err != nil {
		t.Fatalf("not a status document: %v", err)
	}
	var ids []string
	for _, r := range snap.Runs {
		ids = append(ids, r.ID+":"+r.Attention.Code)
	}
	return strings.Join(ids, " ")
}

func TestStatusSort(t *testing.T) {
	t.Parallel()
	jg, oc := fixtureWorkspace(t)
	for _, by := range []string{"id", "path", "updated"} {
		_, out, _ := run(t, "status", "--sort", by, "-o", "jsonl", jg, filepath.Join(oc, "reports"))
		var runs []model.Run
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r model.Run
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		for i := 1; i < len(runs); i++ {
			a, b := runs[i-1], runs[i]
			var ok bool
			switch by {
			case "id":
				ok = a.ID <= b.ID
			case "path":
				ok = a.StatePath <= b.StatePath
			case "updated":
				ok = !a.UpdatedAt.Before(b.UpdatedAt)
			}
			if !ok {
				t.Errorf("--sort %s: %s before %s", by, a.ID, b.ID)
			}
		}
	}
}

// On a terminal the table fits its width: no line is wider, and what does not fit is cut with "…".
func TestStatusTableFitsTheTerminal(t *testing.T) {
	t.Parallel()
	jg, oc := fixtureWorkspace(t)
	for _, width := range []int{200, 120, 80, 50} {
		e := testEnv(t)
		e.width = func(io.Writer) (int, bool) { return width, true }
		for _, format := range []string{"table", "wide"} {
			_, out, _ := runIn(t, e, "status", "-o", format, jg, filepath.Join(oc, "reports"))
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if !strings.HasPrefix(lines[0], "RUN") || len(lines) < 10 {
				t.Errorf("%s at %d columns:\n%s", format, width, out)
			}
			if format == "wide" {
				// As kubectl's -o wide: its lines run on past the terminal, nothing cut (issue 36 point 3).
				if strings.Contains(out, "…") || !strings.Contains(out, filepath.Join(oc, "reports")) {
					t.Errorf("wide at %d columns cut something:\n%s", width, out)
				}
				continue
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("%s at %d columns: a line is %d wide:\n%s", format, width, w, l)
				}
			}
			if !strings.Contains(out, "…") {
				t.Errorf("%s at %d columns: nothing cut, yet the fixtures' reasons are longer:\n%s", format, width, out)
			}
		}
	}
}

// TestStatusJSONConflictsWithEveryOutput (issue 36): `-o wide --json` was refused while `-o table --json`
// was silently JSON; any --output but json given with --json is the same conflict, exit 2.
func TestStatusJSONConflictsWithEveryOutput(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	dir := t.TempDir()
	for _, args := range [][]string{{"-o", "table"}, {"--output=table"}, {"-o", "wide"}} {
		code, out, errOut := runReal(t, env, "", append(append([]string{"status"}, args...), "--json", dir)...)
		want := "--json is --output json; it cannot go with --output " + args[len(args)-1][strings.LastIndex(args[len(args)-1], "=")+1:]
		if code != exitUsage || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("status %v --json: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out, errOut, exitUsage, want)
		}
	}
	if code, out, _ := runReal(t, env, "", "status", "-o", "json", "--json", dir); code == exitUsage || !strings.HasPrefix(out, "{") {
		t.Errorf("status -o json --json: exit %d, stdout %q: the same format twice is no conflict", code, out)
	}
}
