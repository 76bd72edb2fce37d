package cli

// The bad-input matrix, end to end: every case of issue 8 is driven through the entry points a person uses
// (`runwatch status --json`, state.Load, the watcher, the timeline's log source) and must show the exact
// problem, naming the file, without a crash or a hang. Case files live in testdata/bad (see its README);
// cases a file cannot express (FIFOs, /dev/zero, sizes, loops, modes, races) are made here at run time.
// docs/ROBUSTNESS.md maps every case to what runwatch shows and to the test below that proves it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/runlog"
	"runwatch/ui"
	"runwatch/ui/app"
	"runwatch/ui/text"
	"runwatch/watch"
)

// badCaseDeadline bounds one case. It is a hang detector, not a timing assertion: the slowest case (a 50 MiB
// log line under -race on a shared machine) takes well under a tenth of it.
const badCaseDeadline = 2 * time.Minute

// within runs f and fails the test if f has not returned by the deadline, so a read that blocks (a FIFO, an
// endless device) fails its own case instead of stalling the whole suite until go test's timeout.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	timer := time.NewTimer(badCaseDeadline)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s panicked: %v", what, p)
		}
	case <-timer.C:
		t.Fatalf("%s did not return within %s: it hangs", what, badCaseDeadline)
	}
}

// badTree copies testdata/bad/base/<kind> into a temp dir and returns the scan root and the run's own dir
// (the resumable run folder, or the jonggrang feature folder).
func badTree(t *testing.T, kind model.Kind) (root, runDir string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "bad-"+string(kind)+"-20260215T000000Z")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "testdata", "bad", "base", string(kind)))); err != nil {
		t.Fatal(err)
	}
	if kind == model.KindJonggrang {
		return root, filepath.Join(root, ".jonggrang", ".output", "features", "bad-feature")
	}
	return root, root
}

// placeCase copies the case file testdata/bad/<src> over dst.
func placeCase(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "bad", src))
	if err != nil {
		t.Fatal(err)
	}
	writeBad(t, dst, data)
}

func writeBad(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// statusOf runs `runwatch status --json root` through dispatch, under the deadline, and returns the one run
// it must list.
func statusOf(t *testing.T, root string) (model.Run, int) {
	t.Helper()
	snap, code := statusSnapshot(t, root)
	if len(snap.Runs) != 1 {
		t.Fatalf("status lists %d runs, want 1: %+v", len(snap.Runs), snap.Runs)
	}
	return snap.Runs[0], code
}

func statusSnapshot(t *testing.T, args ...string) (model.Snapshot, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	var code int
	within(t, "status --json", func() { code = dispatch(append([]string{"status", "--json"}, args...), &out, &errOut, testEnv(t)) })
	var snap model.Snapshot
	if err := json.Unmarshal(out.Bytes(), &snap); err != nil {
		t.Fatalf("status --json (exit %d) is not JSON: %v\nstdout %q\nstderr %q", code, err, out.String(), errOut.String())
	}
	for _, r := range snap.Runs {
		noReaderCrash(t, r)
	}
	return snap, code
}

// noReaderCrash fails on the problem state.Load records when a reader panicked: the recover keeps the
// dashboard alive, but for these inputs a panic is still a bug.
func noReaderCrash(t *testing.T, r model.Run) {
	t.Helper()
	for _, p := range r.Problems {
		if strings.Contains(p.Message, "crashed runwatch's reader") {
			t.Errorf("reader panicked on %s: %s", r.StatePath, p.Message) // Errorf: also called off the test goroutine
		}
	}
}

// want describes the exact problem a case must show: its code and severity, the file it names (Path, by
// base name) and words of its message. inMessage additionally requires the message itself to name the file.
type want struct {
	code      string
	severity  model.Severity
	file      string
	words     []string
	inMessage bool
}

func expectProblem(t *testing.T, r model.Run, w want) model.Problem {
	t.Helper()
	for _, p := range r.Problems {
		if p.Code != w.code || !containsAll(p.Message, w.words) {
			continue
		}
		if p.Severity != w.severity {
			t.Errorf("%s: severity %s, want %s", w.code, p.Severity, w.severity)
		}
		if filepath.Base(p.Path) != w.file {
			t.Errorf("%s: path %q, want the file %s", w.code, p.Path, w.file)
		}
		if w.inMessage && !strings.Contains(p.Message, w.file) {
			t.Errorf("%s: message %q does not name %s", w.code, p.Message, w.file)
		}
		return p
	}
	t.Fatalf("no %s problem with %q; problems:\n%s", w.code, w.words, problemLines(r))
	return model.Problem{}
}

func expectNoProblems(t *testing.T, r model.Run) {
	t.Helper()
	if len(r.Problems) != 0 {
		t.Fatalf("want no problems, got:\n%s", problemLines(r))
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func problemLines(r model.Run) string {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "  %s %s %s: %q\n", p.Severity, p.Code, filepath.Base(p.Path), p.Message)
	}
	return b.String()
}

func stageList(r model.Run) string {
	var keys []string
	for _, s := range r.Stages {
		keys = append(keys, s.Key+"="+string(s.Status))
	}
	return strings.Join(keys, " ")
}

func TestBadInputManifest(t *testing.T) {
	const file = "MANIFEST.yaml"
	cases := []struct {
		name  string
		exit  int
		want  want
		check func(t *testing.T, r model.Run)
	}{
		{"empty", exitProblems, want{model.CodeManifestUnparsable, model.SeverityError, file, []string{"holds no YAML document (empty)"}, true}, notLoaded},
		{"truncated", exitProblems, want{model.CodeManifestUnparsable, model.SeverityError, file, []string{"line 5: found unexpected end of stream"}, true}, notLoaded},
		{"tabs", exitProblems, want{model.CodeManifestUnparsable, model.SeverityError, file, []string{"line 4: found character that cannot start any token", "indented with a tab"}, true}, notLoaded},
		{"deep-nesting", exitProblems, want{model.CodeManifestUnparsable, model.SeverityError, file, []string{"exceeded max depth of 10000"}, true}, notLoaded},
		{"alias-bomb", exitOK, want{model.CodeManifestInvalid, model.SeverityWarning, file, []string{"active_phases: line 8: expected a number, found a list"}, true},
			func(t *testing.T, r model.Run) {
				// The bomb is read without expanding it: one phase, and a bounded list of notes.
				if len(r.Stages) != 1 || r.Status != model.StatusRunning || len(r.Problems) > 25 {
					t.Errorf("stages %s status %s, %d problems", stageList(r), r.Status, len(r.Problems))
				}
				// Every alias repeats the node it points at; its mistakes are still one mistake each.
				seen := map[string]bool{}
				for _, p := range r.Problems {
					if seen[p.Message] {
						t.Errorf("problem reported more than once: %s", p.Message)
					}
					seen[p.Message] = true
				}
			}},
		{"several-documents", exitProblems, want{model.CodeManifestInvalid, model.SeverityError, file, []string{"several YAML documents (another starts at line 5)", "only the first is shown"}, true},
			func(t *testing.T, r model.Run) {
				if r.ID != "bad-feature" || stageList(r) != "1=running" {
					t.Errorf("first document not shown: id %s stages %s", r.ID, stageList(r))
				}
			}},
		{"phases-list", exitProblems, want{model.CodeManifestInvalid, model.SeverityError, file, []string{"phases: line 5: phases is a list; the convention writes a mapping"}, true},
			func(t *testing.T, r model.Run) {
				if stageList(r) != "1=completed 2=running" || r.CurrentStage != "2" || r.Status != model.StatusRunning {
					t.Errorf("list phases not shown: %s current %q status %s", stageList(r), r.CurrentStage, r.Status)
				}
			}},
		{"unknown-status", exitOK, want{model.CodeUnknownStatus, model.SeverityWarning, file, []string{`unknown run status "exploded"`}, true},
			func(t *testing.T, r model.Run) {
				expectProblem(t, r, want{model.CodeUnknownStatus, model.SeverityWarning, file, []string{`unknown phase status "weird"; shown as pending`}, true})
				if r.Status != model.StatusUnknown || r.RawStatus != "exploded" || stageList(r) != "1=pending" || r.Stages[0].RawStatus() != "weird" {
					t.Errorf("status %s raw %q stages %s", r.Status, r.RawStatus, stageList(r))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := badTree(t, model.KindJonggrang)
			placeCase(t, filepath.Join("manifest", tc.name+".yaml"), filepath.Join(dir, file))
			r, code := statusOf(t, root)
			if code != tc.exit {
				t.Errorf("exit %d, want %d", code, tc.exit)
			}
			expectProblem(t, r, tc.want)
			tc.check(t, r)
		})
	}
	t.Run("50 MiB", func(t *testing.T) {
		root, dir := badTree(t, model.KindJonggrang)
		sparseFile(t, filepath.Join(dir, file), 50<<20)
		r, code := statusOf(t, root)
		expectProblem(t, r, want{model.CodeManifestTooLarge, model.SeverityError, file, []string{"file is 52428800 bytes, larger than the 1048576-byte limit"}, true})
		notLoaded(t, r)
		if code != exitProblems {
			t.Errorf("exit %d", code)
		}
	})
}

// notLoaded checks that a manifest that could not be read shows nothing made up: no phases, blocked.
func notLoaded(t *testing.T, r model.Run) {
	t.Helper()
	if len(r.Stages) != 0 || r.Status != model.StatusBlocked {
		t.Errorf("an unreadable state file must not yield phases: stages %s status %s", stageList(r), r.Status)
	}
}

// sparseFile makes a file of size bytes without writing them: only the size matters to a size cap.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

func TestBadInputStateEnv(t *testing.T) {
	const file = "state.env"
	runID := func(t *testing.T, r model.Run) {
		t.Helper()
		if v, _ := r.Resumable.Value("RUN_ID"); v != "20260215T000000Z" {
			t.Errorf("RUN_ID = %q, want it read clean (no BOM, no CR)", v)
		}
	}
	loadedAsBase := func(t *testing.T, r model.Run) {
		t.Helper()
		if stageList(r) != "S1=completed S2=pending S3=pending" || r.CurrentStage != "S2" || r.Status != model.StatusPaused {
			t.Errorf("stages %s current %q status %s", stageList(r), r.CurrentStage, r.Status)
		}
	}
	cases := []struct {
		name  string
		exit  int
		want  *want
		check func(t *testing.T, r model.Run)
	}{
		{"unterminated-quote", exitProblems, &want{model.CodeStateUnparsable, model.SeverityError, file, []string{"line 2: unterminated double quote"}, true},
			func(t *testing.T, r model.Run) {
				// The good lines still count; the broken CURRENT_STAGE line is not guessed at.
				if r.Status != model.StatusBlocked || r.CurrentStage != "" {
					t.Errorf("status %s current %q", r.Status, r.CurrentStage)
				}
			}},
		{"nul-byte", exitProblems, &want{model.CodeStateUnparsable, model.SeverityError, file, []string{"line 3: contains a NUL byte"}, true},
			func(t *testing.T, r model.Run) {
				if r.Status != model.StatusBlocked {
					t.Errorf("status %s", r.Status)
				}
			}},
		{"crlf", exitOK, nil, func(t *testing.T, r model.Run) { expectNoProblems(t, r); loadedAsBase(t, r); runID(t, r) }},
		{"bom", exitOK, nil, func(t *testing.T, r model.Run) { expectNoProblems(t, r); loadedAsBase(t, r); runID(t, r) }},
		// As when the shell sources the file, the later assignment wins.
		{"duplicate-keys", exitOK, nil, func(t *testing.T, r model.Run) { expectNoProblems(t, r); loadedAsBase(t, r) }},
		// <stage>_done flags are matched case-insensitively, but current_stage is not CURRENT_STAGE: the shell
		// that sources the file would not see it either.
		{"lowercase-keys", exitOK, &want{model.CodeCurrentStageUnknown, model.SeverityWarning, file, []string{"CURRENT_STAGE is not set"}, true},
			func(t *testing.T, r model.Run) {
				if stageList(r) != "s1=completed s2=pending s3=pending" {
					t.Errorf("stages %s", stageList(r))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := badTree(t, model.KindResumable)
			placeCase(t, filepath.Join("state", tc.name+".env"), filepath.Join(dir, file))
			r, code := statusOf(t, root)
			if code != tc.exit {
				t.Errorf("exit %d, want %d", code, tc.exit)
			}
			if tc.want != nil {
				expectProblem(t, r, *tc.want)
			}
			tc.check(t, r)
		})
	}
	t.Run("1 MiB value", func(t *testing.T) {
		root, dir := badTree(t, model.KindResumable)
		base, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		writeBad(t, filepath.Join(dir, file), append(base, "NOTES=\""+strings.Repeat("x", 1<<20)+"\"\n"...))
		r, code := statusOf(t, root)
		expectProblem(t, r, want{model.CodeStateTooLarge, model.SeverityError, file, []string{"was not loaded: file is 1048688 bytes, larger than the 1048576-byte limit"}, true})
		if len(r.Stages) != 0 || r.Status != model.StatusBlocked || code != exitProblems {
			t.Errorf("a too-large state file must not be loaded: stages %s status %s exit %d", stageList(r), r.Status, code)
		}
	})
}

func TestBadInputChecklistValues(t *testing.T) {
	const file = "checklist.state.env"
	root, dir := badTree(t, model.KindResumable)
	placeCase(t, filepath.Join("checklist", "values-not-0-1.env"), filepath.Join(dir, file))
	r, code := statusOf(t, root)
	for _, item := range []string{`CB_S1_READY has value "yes"`, `CB_S2_VERIFY has value "2"`, `CB_S2_SMOKE has value ""`} {
		expectProblem(t, r, want{model.CodeChecklistValue, model.SeverityWarning, file, []string{item, "counts as not done"}, true})
	}
	// S1 is marked done, yet its only item is not 1: a stop condition.
	expectProblem(t, r, want{model.CodeStageDoneChecklistIncomplete, model.SeverityError, file, []string{`S1 is marked done but CB_S1_READY is "yes"`}, false})
	if code != exitProblems || r.Status != model.StatusBlocked {
		t.Errorf("exit %d status %s", code, r.Status)
	}
}

// lockCase is one lock file, judged by each convention's own rules.
type lockCase struct {
	name    string
	verdict model.Verdict
	reasons []string
}

func TestBadInputLocks(t *testing.T) {
	kthreadd := func(t *testing.T) {
		comm, err := os.ReadFile("/proc/2/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "kthreadd" {
			t.Skipf("pid 2 is not kthreadd here (%q, %v)", comm, err)
		}
	}
	byKind := map[model.Kind][]lockCase{
		model.KindJonggrang: {
			{"empty", model.VerdictStale, []string{"unparsable: empty file"}},
			{"binary", model.VerdictStale, []string{"unparsable: not a JSON object: binary content"}},
			// No pid: the convention's age rule speaks.
			{"pid-0", model.VerdictStale, []string{"exceeds 30m"}},
			{"pid-minus-1", model.VerdictUnknown, []string{"pid -1 is not a valid process id"}},
			{"pid-huge", model.VerdictUnknown, []string{"pid 99999999999 is not a valid process id"}},
			// kthreadd exists, so kill(2, 0) succeeds; it is still no agent.
			{"pid-kthreadd", model.VerdictStale, []string{"pid 2 is a kernel thread, which never holds a lock file"}},
			{"timestamp-future", model.VerdictUnknown, []string{"in the future", "never expires"}},
			{"timestamp-other-format", model.VerdictUnknown, []string{`acquired_at "16/02/2026 05:00" is not a timestamp`, "no usable timestamp and no pid"}},
		},
		model.KindResumable: {
			{"empty", model.VerdictStale, []string{"unparsable: the lock file is empty"}},
			{"binary", model.VerdictStale, []string{"unparsable: neither JSON nor KEY=value lines"}},
			{"pid-0", model.VerdictUnknown, []string{"no pid recorded; liveness cannot be checked"}},
			{"pid-minus-1", model.VerdictUnknown, []string{"pid -1 is not a valid process id"}},
			{"pid-huge", model.VerdictUnknown, []string{"pid 99999999999 is not a valid process id"}},
			// kthreadd exists, so kill(2, 0) succeeds; it is still no agent.
			{"pid-kthreadd", model.VerdictStale, []string{"pid 2 is a kernel thread, which never holds a lock file"}},
			{"timestamp-future", model.VerdictUnknown, []string{"in the future", "no pid recorded"}},
			{"timestamp-other-format", model.VerdictUnknown, []string{`timestamp "16/02/2026 05:00" is not a time runwatch understands`}},
		},
	}
	for kind, cases := range byKind {
		for _, tc := range cases {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				if strings.HasPrefix(tc.name, "pid-kthreadd") {
					kthreadd(t)
				}
				root, dir := badTree(t, kind)
				dst := lockPathFor(kind, root, dir, tc.name)
				placeCase(t, filepath.Join("lock", string(kind), tc.name+".lock"), dst)
				r, code := statusOf(t, root)
				if len(r.Locks) != 1 {
					t.Fatalf("locks %+v; problems:\n%s", r.Locks, problemLines(r))
				}
				l := r.Locks[0]
				if l.Verdict != tc.verdict || !containsAll(strings.Join(l.Reasons, "; "), tc.reasons) {
					t.Errorf("verdict %s reasons %q, want %s with %q", l.Verdict, l.Reasons, tc.verdict, tc.reasons)
				}
				// A lock that is not live is a warning on the run, never a stop condition by itself.
				if code != exitOK {
					t.Errorf("exit %d; problems:\n%s", code, problemLines(r))
				}
				if l.Verdict != model.VerdictLive {
					code := map[model.Verdict]string{model.VerdictStale: model.CodeLockStale, model.VerdictUnknown: model.CodeLockUnknown}[l.Verdict]
					expectProblem(t, r, want{code, model.SeverityWarning, filepath.Base(dst), nil, kind == model.KindJonggrang})
				}
			})
		}
		t.Run(string(kind)+"/directory", func(t *testing.T) {
			root, dir := badTree(t, kind)
			dst := lockPathFor(kind, root, dir, "dir")
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			r, _ := statusOf(t, root)
			if len(r.Locks) != 0 {
				t.Errorf("a directory is not a lock: %+v", r.Locks)
			}
			words := []string{"directory"}
			if kind == model.KindJonggrang {
				words = []string{"not a regular file"}
			}
			expectProblem(t, r, want{model.CodeLockUnreadable, model.SeverityWarning, filepath.Base(dst), words, true})
		})
	}
}

func lockPathFor(kind model.Kind, root, runDir, name string) string {
	if kind == model.KindJonggrang {
		return filepath.Join(root, ".jonggrang", "locks", name+".lock")
	}
	return filepath.Join(runDir, "run.lock")
}

// TestBadInputRunLog covers the log cases: status must stay quiet about content (a log is agent output,
// anything goes), and the timeline's source must read it without blocking and hand every line to the view,
// which sanitises it (TestHostileFilesNeverReachTheTerminal in ui renders these same files).
func TestBadInputRunLog(t *testing.T) {
	const file = "run.log"
	cases := []struct {
		name  string
		check func(t *testing.T, lines []string)
	}{
		{"binary", func(t *testing.T, lines []string) {
			if len(lines) != 3 || !strings.HasSuffix(lines[2], "after binary") || !strings.Contains(lines[1], "\x00\x01") {
				t.Errorf("lines %q", lines)
			}
		}},
		{"invalid-utf8", func(t *testing.T, lines []string) {
			if len(lines) != 2 || text.Sanitize(lines[1]) != "[2026-02-15T00:01:00Z] stage_start S1 note=\uFFFD\uFFFD\uFFFD( half \uFFFD\uFFFD" {
				t.Errorf("lines %q, sanitised %q", lines, text.Sanitize(lines[len(lines)-1]))
			}
		}},
		{"no-trailing-newline", func(t *testing.T, lines []string) {
			if len(lines) != 2 || lines[1] != "[2026-02-15T00:01:00Z] stage_start S1 last words" {
				t.Errorf("the last, unterminated line must show: %q", lines)
			}
		}},
		{"escapes", func(t *testing.T, lines []string) {
			if len(lines) != 16 {
				t.Errorf("%d lines, want 8 entries with a continuation each", len(lines))
			}
			for _, l := range lines {
				if s := text.Sanitize(l); strings.ContainsAny(s, "\x1b\x07\x08\r\u009b\u009d\u202e") {
					t.Errorf("sanitised line still acts on a terminal: %q", s)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := badTree(t, model.KindResumable)
			placeCase(t, filepath.Join("log", tc.name+".log"), filepath.Join(dir, file))
			r, code := statusOf(t, root)
			wantCode := exitOK
			if tc.name == "escapes" {
				// Its entries are stage_blocked lines for S2, the current stage: the latest word on it is
				// "blocked", a stop condition (docs/FORMATS.md C.1), whose text must reach the terminal inert.
				p := expectProblem(t, r, want{model.CodeStageBlocked, model.SeverityError, file, []string{"stage S2 is blocked"}, false})
				if s := text.Sanitize(p.Message); strings.ContainsAny(s, "\x1b\x07\x08\r\u009b\u009d\u202e") {
					t.Errorf("problem text acts on a terminal: %q", s)
				}
				wantCode = exitProblems
			} else {
				expectNoProblems(t, r)
			}
			if code != wantCode || r.Log == nil || r.Log.SizeBytes == 0 {
				t.Errorf("exit %d log %+v", code, r.Log)
			}
			tc.check(t, timelineLines(t, filepath.Join(dir, file)))
		})
	}
	t.Run("50 MiB line", func(t *testing.T) {
		root, dir := badTree(t, model.KindResumable)
		path := filepath.Join(dir, file)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(f, "[2026-02-15T00:00:00Z] run bootstrapped\n[2026-02-15T00:01:00Z] huge ")
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 50 {
			if _, err := f.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprint(f, "\n[2026-02-15T00:02:00Z] after the huge line\n")
		f.Close()
		r, code := statusOf(t, root)
		expectNoProblems(t, r)
		if code != exitOK || r.Log.SizeBytes < 50<<20 {
			t.Errorf("exit %d log %+v", code, r.Log)
		}
		lines := timelineLines(t, path)
		if n := len(lines); n < 2 || lines[n-1] != "[2026-02-15T00:02:00Z] after the huge line" ||
			!strings.Contains(lines[n-2], "bytes elided)") || len(lines[n-2]) > runlog.MaxLineBytes+64 {
			t.Errorf("huge line not cut with a marker: %d lines, last two %.80q … %q", n, lines[max(0, n-2)], lines[n-1])
		}
	})
	t.Run("FIFO", func(t *testing.T) {
		root, dir := badTree(t, model.KindResumable)
		path := filepath.Join(dir, file)
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		r, _ := statusOf(t, root)
		expectProblem(t, r, want{model.CodeLogUnreadable, model.SeverityWarning, file, []string{"FIFO"}, true})
		refusedByTimeline(t, path, "named pipe")
		watcherSees(t, root, model.CodeLogUnreadable)
	})
	t.Run("symlink to /dev/zero", func(t *testing.T) {
		root, dir := badTree(t, model.KindResumable)
		path := filepath.Join(dir, file)
		os.Remove(path)
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
		r, _ := statusOf(t, root)
		expectProblem(t, r, want{model.CodeLogUnreadable, model.SeverityWarning, file, []string{"device"}, true})
		refusedByTimeline(t, path, "character device")
		watcherSees(t, root, model.CodeLogUnreadable)
	})
}

// timelineLines opens a log the way the dashboard's timeline does and returns every line it would show.
func timelineLines(t *testing.T, path string) []string {
	t.Helper()
	var src app.LogSource
	var err error
	within(t, "opening the timeline", func() { src, err = ui.OpenIndexedLog(path) })
	if err != nil {
		t.Fatalf("timeline refused a regular log: %v", err)
	}
	defer src.Close()
	// An indexed source counts a big log's head in the background; the whole file is wanted here.
	if w, ok := src.(interface{ Wait(context.Context) error }); ok {
		within(t, "indexing the log", func() { err = w.Wait(context.Background()) })
		if err != nil {
			t.Fatal(err)
		}
	}
	return src.Lines(0, src.Len())
}

func refusedByTimeline(t *testing.T, path, kind string) {
	t.Helper()
	var err error
	within(t, "opening the timeline", func() {
		var src app.LogSource
		if src, err = ui.OpenIndexedLog(path); err == nil {
			src.Close()
		}
	})
	if err == nil || !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), path) {
		t.Errorf("timeline error %v, want it to name %s and %q", err, path, kind)
	}
}

// watcherSees starts the real watcher on root and checks its first snapshot holds one run with the problem.
func watcherSees(t *testing.T, root, code string) {
	t.Helper()
	var runs []model.Run
	var err error
	within(t, "the watcher's first snapshot", func() {
		var w *watch.Watcher
		if w, err = watch.New(watch.Options{Paths: []string{root}}); err != nil {
			return
		}
		runs = w.Snapshot()
		err = w.Close()
	})
	if err != nil {
		t.Fatalf("watcher: %v", err)
	}
	if len(runs) != 1 {
		t.Fatalf("watcher snapshot holds %d runs, want 1", len(runs))
	}
	found := false
	for _, p := range runs[0].Problems {
		found = found || p.Code == code
	}
	if !found {
		t.Errorf("watcher's run lacks %s:\n%s", code, problemLines(runs[0]))
	}
}

func TestBadInputRunRoot(t *testing.T) {
	t.Run("symlink loop inside", func(t *testing.T) {
		root, _ := badTree(t, model.KindResumable)
		scan := filepath.Dir(root)
		for name, target := range map[string]string{"self": ".", "a": "b", "b": "a", "up": ".."} {
			if err := os.Symlink(target, filepath.Join(scan, name)); err != nil {
				t.Fatal(err)
			}
		}
		snap, code := statusSnapshot(t, scan)
		if len(snap.Runs) != 1 || snap.Runs[0].StatePath != filepath.Join(root, "state.env") || code != exitOK {
			t.Fatalf("exit %d, runs %d: the run must be listed once", code, len(snap.Runs))
		}
		var runs []model.Run
		within(t, "the watcher on a symlink loop", func() {
			w, err := watch.New(watch.Options{Paths: []string{scan}})
			if err != nil {
				t.Error(err)
				return
			}
			runs = w.Snapshot()
			w.Close()
		})
		if len(runs) != 1 {
			t.Errorf("watcher lists %d runs", len(runs))
		}
	})
	t.Run("root is a symlink loop", func(t *testing.T) {
		loop := filepath.Join(t.TempDir(), "runs")
		if err := os.Symlink(loop, loop); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		var code int
		within(t, "status on a symlink loop", func() { code = dispatch([]string{"status", "--json", loop}, &out, &errOut, testEnv(t)) })
		if code != exitUsage || !strings.Contains(errOut.String(), loop) || !strings.Contains(errOut.String(), "too many levels of symbolic links") {
			t.Errorf("exit %d stderr %q", code, errOut.String())
		}
	})
	t.Run("checklist is a directory", func(t *testing.T) {
		// One way a file the reader cannot read looks to root, who reads mode 000 files anyway.
		root, dir := badTree(t, model.KindResumable)
		os.Remove(filepath.Join(dir, "checklist.state.env"))
		if err := os.Mkdir(filepath.Join(dir, "checklist.state.env"), 0o755); err != nil {
			t.Fatal(err)
		}
		r, code := statusOf(t, root)
		expectProblem(t, r, want{model.CodeChecklistUnreadable, model.SeverityError, "checklist.state.env", []string{"directory"}, true})
		if code != exitProblems || r.Status != model.StatusBlocked {
			t.Errorf("exit %d status %s", code, r.Status)
		}
	})
	t.Run("manifest is a directory", func(t *testing.T) {
		root, dir := badTree(t, model.KindJonggrang)
		os.Remove(filepath.Join(dir, "MANIFEST.yaml"))
		if err := os.Mkdir(filepath.Join(dir, "MANIFEST.yaml"), 0o755); err != nil {
			t.Fatal(err)
		}
		r, code := statusOf(t, root)
		expectProblem(t, r, want{model.CodeManifestUnreadable, model.SeverityError, "MANIFEST.yaml", []string{"not a regular file (a directory)"}, true})
		if code != exitProblems {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("deleted while being read", func(t *testing.T) {
		for _, kind := range []model.Kind{model.KindResumable, model.KindJonggrang} {
			deletedWhileRead(t, kind)
		}
	})
}

// deletedWhileRead loads a run in a loop while another goroutine deletes and recreates its folder. Every
// load must return either the run as it is on disk or a problem saying a file is missing or unreadable:
// never a panic, never a run made up from half a read.
func deletedWhileRead(t *testing.T, kind model.Kind) {
	root, dir := badTree(t, kind)
	base := filepath.Join("..", "testdata", "bad", "base", string(kind))
	locs, err := state.Discover([]string{root}, 0)
	if err != nil || len(locs) != 1 {
		t.Fatalf("discover: %v %v", locs, err)
	}
	allowed := map[string]bool{
		model.CodeStateMissing: true, model.CodeStateUnreadable: true, model.CodeChecklistMissing: true,
		model.CodeChecklistUnreadable: true, model.CodeManifestMissing: true, model.CodeManifestUnreadable: true,
		model.CodeManifestUnparsable: true, model.CodeStateUnparsable: true, model.CodeChecklistUnparsable: true,
		model.CodeNoStages: true, model.CodeCurrentStageUnknown: true, model.CodeLogUnreadable: true,
	}
	stop := make(chan struct{})
	var churns atomic.Int64
	churned := make(chan struct{})
	go func() {
		defer close(churned)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Remove the run folder and copy it back, as a reset or a sync tool would.
			os.RemoveAll(root)
			os.CopyFS(root, os.DirFS(base))
			churns.Add(1)
		}
	}()
	env := state.NewEnv(0)
	var whole, partial int
	loads := 300
	if testing.Short() {
		loads = 30 // the same reads under the same churn, fewer times: 7 s of the -short suite otherwise
	}
	within(t, "loading a run that is being deleted", func() {
		// The loads go on until the folder has churned under them a few times: on a loaded machine the
		// churn may not have run once in the first loads.
		for i := 0; i < loads || churns.Load() < 3; i++ {
			r := state.Load(locs[0], env)
			noReaderCrash(t, r)
			if len(r.Problems) == 0 {
				if len(r.Stages) != 3 {
					t.Errorf("a run read without problems must be whole: stages %s", stageList(r))
				}
				whole++
				continue
			}
			partial++
			for _, p := range r.Problems {
				if !allowed[p.Code] {
					t.Errorf("unexpected problem while the folder churns: %s %q", p.Code, p.Message)
				}
			}
		}
	})
	close(stop)
	<-churned
	t.Logf("%s: %d whole reads, %d reads that saw the folder missing or half-copied (in %s)", kind, whole, partial, dir)
}

// helperArgsEnv makes the test binary act as runwatch itself (see TestMain), so a case can run it as an
// unprivileged user: tests run as root here, and root reads mode-000 files and folders.
const helperArgsEnv = "RUNWATCH_BAD_INPUT_ARGS"

func TestMain(m *testing.M) {
	// Linked as "runwatch" (see runwatchOnPath), the test binary is runwatch with its arguments.
	if filepath.Base(os.Args[0]) == "runwatch" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	if args := os.Getenv(helperArgsEnv); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(99)
		}
		os.Exit(Main(argv, os.Stdout, os.Stderr, os.Getenv))
	}
	// The parallel tests (t.Parallel) wait on tmux, sshd, shells and the built binary more than on this
	// process: at -parallel's default, GOMAXPROCS (2 on CI), they mostly waited one after another.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", "4")
	}
	// Completion keeps a walk cache under $XDG_CACHE_HOME: the shells and binaries the tests start go to a
	// folder of their own, not the home of whoever runs them. They inherit it from this process, which no
	// test changes the environment of: the test binary starts again, with it, before any test runs.
	cache := os.Getenv(testCacheEnv)
	if cache == "" {
		startAgainWithACache()
	}
	// The whole package needs the built binary: build it while the sequential tests run (they mostly wait on
	// files and children), not in the first test that asks for it. A run picked with -run builds on demand.
	if !testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		go builtRunwatch.once.Do(builtRunwatch.build)
	}
	code := m.Run()
	os.RemoveAll(cache)
	removeBuiltRunwatch()
	os.Exit(code)
}

// testCacheEnv names the cache folder of a test binary that TestMain started again with it.
const testCacheEnv = "RUNWATCH_TEST_CACHE"

// startAgainWithACache makes a cache folder and replaces this process by the test binary again, with
// $XDG_CACHE_HOME (and testCacheEnv) there; it returns only to exit when it cannot.
func startAgainWithACache() {
	cache, err := os.MkdirTemp("", "runwatch-test-cache-")
	if err == nil {
		var self string
		if self, err = os.Executable(); err == nil {
			err = syscall.Exec(self, os.Args, append(os.Environ(), "XDG_CACHE_HOME="+cache, testCacheEnv+"="+cache))
		}
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(99)
}

// nobody is the uid/gid the unprivileged cases run as.
const nobody = 65534

// asNobody runs `runwatch args...` as uid nobody when the test runs as root, or directly otherwise, and
// returns the exit code and both outputs. Paths given must be reachable by nobody (see openTempDir).
func asNobody(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		var out, errOut bytes.Buffer
		var code int
		within(t, "runwatch "+strings.Join(args, " "), func() { code = dispatch(args, &out, &errOut, testEnv(t)) })
		return code, out.String(), errOut.String()
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// go test's build dir is private to root; nobody runs a copy.
	bin := filepath.Join(openTempDir(t), "runwatch.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(args)
	home := openTempDir(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{helperArgsEnv + "=" + string(argv), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var runErr error
	within(t, "runwatch as nobody", func() { runErr = cmd.Run() })
	code := 0
	if ee, ok := runErr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if runErr != nil {
		t.Fatalf("running as nobody: %v", runErr)
	}
	if code == 99 {
		t.Fatalf("helper failed: %s", errOut.String())
	}
	return code, out.String(), errOut.String()
}

// openTempDir is a temp dir that every user may enter (t.TempDir is private to the test's user).
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "runwatch-bad-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			os.Chmod(p, 0o755) // mode-000 folders must be enterable to be removed by a non-root runner
			return nil
		})
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBadInputUnreadable covers mode 000 for real: as root the cases run as uid nobody (a copy of this test
// binary acting as runwatch), since root is not stopped by file modes.
func TestBadInputUnreadable(t *testing.T) {
	tree := func(t *testing.T) (scan, runDir string) {
		scan = openTempDir(t)
		runDir = filepath.Join(scan, "bad-resumable-20260215T000000Z")
		if err := os.CopyFS(runDir, os.DirFS(filepath.Join("..", "testdata", "bad", "base", "resumable"))); err != nil {
			t.Fatal(err)
		}
		filepath.WalkDir(scan, func(p string, d os.DirEntry, err error) error {
			if d.IsDir() {
				os.Chmod(p, 0o755)
			} else {
				os.Chmod(p, 0o644)
			}
			return nil
		})
		return scan, runDir
	}
	snapOf := func(t *testing.T, out string) model.Snapshot {
		var snap model.Snapshot
		if err := json.Unmarshal([]byte(out), &snap); err != nil {
			t.Fatalf("not JSON: %v: %q", err, out)
		}
		return snap
	}
	t.Run("state file mode 000", func(t *testing.T) {
		scan, runDir := tree(t)
		if err := os.Chmod(filepath.Join(runDir, "state.env"), 0); err != nil {
			t.Fatal(err)
		}
		code, out, _ := asNobody(t, "status", "--json", scan)
		snap := snapOf(t, out)
		if len(snap.Runs) != 1 || code != exitProblems {
			t.Fatalf("exit %d runs %d", code, len(snap.Runs))
		}
		expectProblem(t, snap.Runs[0], want{model.CodeStateUnreadable, model.SeverityError, "state.env", []string{"permission denied"}, true})
	})
	// The watcher (the dashboard's health line, `runwatch events`) names what it cannot watch.
	watcherSays := func(t *testing.T, scan, dir string) {
		t.Helper()
		code, out, errOut := asNobody(t, "events", "--timeout", "1s", scan)
		var health struct {
			Type   string `json:"type"`
			Health struct {
				Err string `json:"error"`
			} `json:"health"`
		}
		for _, line := range strings.Split(out, "\n") {
			if json.Unmarshal([]byte(line), &health) == nil && health.Type == "watch-health" {
				break
			}
		}
		if code != 3 || health.Health.Err != "watch "+dir+": permission denied" {
			t.Errorf("events exit %d, health error %q; stdout %q stderr %q", code, health.Health.Err, out, errOut)
		}
	}
	t.Run("run folder mode 000, watcher", func(t *testing.T) {
		scan, runDir := tree(t)
		if err := os.Chmod(runDir, 0); err != nil {
			t.Fatal(err)
		}
		watcherSays(t, scan, runDir)
	})
	t.Run("scan root mode 000, watcher", func(t *testing.T) {
		scan, _ := tree(t)
		if err := os.Chmod(scan, 0); err != nil {
			t.Fatal(err)
		}
		watcherSays(t, scan, scan)
	})
	t.Run("run folder mode 000", func(t *testing.T) {
		scan, runDir := tree(t)
		if err := os.Chmod(runDir, 0); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := asNobody(t, "status", "--json", scan)
		snap := snapOf(t, out)
		unreadableFolderNamed(t, runDir, code, len(snap.Runs), errOut)
	})
	t.Run("scan root mode 000", func(t *testing.T) {
		scan, _ := tree(t)
		if err := os.Chmod(scan, 0); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := asNobody(t, "status", "--json", scan)
		snap := snapOf(t, out)
		unreadableFolderNamed(t, scan, code, len(snap.Runs), errOut)
	})
}

// unreadableFolderNamed checks what status says of a folder it cannot list: the folder and the reason on
// stderr, and exit 6 (not 1, "a run needs you"), since runs may be missing from the list.
func unreadableFolderNamed(t *testing.T, dir string, code, runs int, stderr string) {
	t.Helper()
	want := "runwatch status: cannot read folder " + dir + ": permission denied; runs under it are not shown\n"
	if code != exitIncomplete || runs != 0 || stderr != want {
		t.Errorf("exit %d, %d runs, stderr %q; want exit 6 and %q", code, runs, stderr, want)
	}
}

func TestBadInputFileNames(t *testing.T) {
	scan := t.TempDir()
	names := []string{"run\nwith newline\x1b[31m-20260215T000000Z", "bad-utf8-\xff\xfe-20260215T000000Z"}
	for _, name := range names {
		if err := os.CopyFS(filepath.Join(scan, name), os.DirFS(filepath.Join("..", "testdata", "bad", "base", "resumable"))); err != nil {
			t.Fatal(err)
		}
	}
	// The readers keep the name as data: it is what identifies the folder on disk.
	locs, err := state.Discover([]string{scan}, 0)
	if err != nil || len(locs) != 2 {
		t.Fatalf("discover: %d runs, %v", len(locs), err)
	}
	env := state.NewEnv(0)
	for _, loc := range locs {
		if r := state.Load(loc, env); r.ID != filepath.Base(loc.Dir) || len(r.Problems) != 0 {
			t.Errorf("id %q, want the folder name %q; problems:\n%s", r.ID, filepath.Base(loc.Dir), problemLines(r))
		}
	}

	// JSON carries the newline escaped and invalid UTF-8 as U+FFFD (encoding/json's rule), never raw bytes.
	snap, code := statusSnapshot(t, scan)
	if code != exitOK || len(snap.Runs) != 2 || snap.Runs[0].ID != "bad-utf8-\uFFFD\uFFFD-20260215T000000Z" || snap.Runs[1].ID != names[0] {
		t.Errorf("exit %d ids %q", code, runIDs(snap.Runs))
	}

	// The table shows one line per run, sanitised.
	var out, errOut bytes.Buffer
	within(t, "status table", func() { code = dispatch([]string{"status", scan}, &out, &errOut, testEnv(t)) })
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if code != exitOK || len(lines) != 3 || !strings.HasPrefix(lines[1], "bad-utf8-\uFFFD\uFFFD-20260215T000000Z ") ||
		!strings.HasPrefix(lines[2], "run^Jwith newline-20260215T000000Z ") {
		t.Errorf("exit %d table:\n%s", code, out.String())
	}
	assertPlainTerminalText(t, "status table", out.String())
}

func runIDs(runs []model.Run) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestBadInputSizeCaps: a state file over its reader's cap is reported with its size and the cap, and not
// loaded, in both conventions. Content is real text (not a sparse file), so a reader that checked the size
// only after reading would be caught by its problem, not by luck.
func TestBadInputSizeCaps(t *testing.T) {
	filler := func(n int) []byte { return bytes.Repeat([]byte("# padding line written by a runaway agent\n"), n/42+1) }
	cases := []struct {
		name  string
		kind  model.Kind
		file  func(root, dir string) string
		size  int
		check func(t *testing.T, r model.Run, path string)
	}{
		{"MANIFEST.yaml over 1 MiB", model.KindJonggrang, func(_, dir string) string { return filepath.Join(dir, "MANIFEST.yaml") }, 1<<20 + 1,
			func(t *testing.T, r model.Run, path string) {
				expectProblem(t, r, want{model.CodeManifestTooLarge, model.SeverityError, "MANIFEST.yaml", []string{"larger than the 1048576-byte limit"}, true})
				notLoaded(t, r)
			}},
		{"state.env over 1 MiB", model.KindResumable, func(_, dir string) string { return filepath.Join(dir, "state.env") }, 1<<20 + 1,
			func(t *testing.T, r model.Run, path string) {
				expectProblem(t, r, want{model.CodeStateTooLarge, model.SeverityError, "state.env", []string{"was not loaded", "larger than the 1048576-byte limit"}, true})
				notLoaded(t, r)
			}},
		{"checklist.state.env over 1 MiB", model.KindResumable, func(_, dir string) string { return filepath.Join(dir, "checklist.state.env") }, 1<<20 + 1,
			func(t *testing.T, r model.Run, path string) {
				expectProblem(t, r, want{model.CodeStateTooLarge, model.SeverityError, "checklist.state.env", []string{"was not loaded", "larger than the 1048576-byte limit"}, true})
			}},
		{"jonggrang lock over 64 KiB", model.KindJonggrang, func(root, _ string) string { return filepath.Join(root, ".jonggrang", "locks", "big.lock") }, 64<<10 + 1,
			func(t *testing.T, r model.Run, path string) { lockOverCap(t, r, "65536") }},
		{"resumable lock over 64 KiB", model.KindResumable, func(_, dir string) string { return filepath.Join(dir, "run.lock") }, 64<<10 + 1,
			func(t *testing.T, r model.Run, path string) { lockOverCap(t, r, "65536") }},
		{"phase output over 2 MiB", model.KindJonggrang, func(_, dir string) string { return filepath.Join(dir, "02-developer-task.json") }, 2<<20 + 1,
			func(t *testing.T, r model.Run, path string) {
				expectProblem(t, r, want{model.CodeFileUnparsable, model.SeverityWarning, "02-developer-task.json", []string{"limit"}, true})
			}},
		{"checkpoint over 256 KiB", model.KindResumable, func(_, dir string) string { return filepath.Join(dir, "artifacts", "checkpoints", "S1.done.json") }, 256<<10 + 1,
			func(t *testing.T, r model.Run, path string) {
				expectProblem(t, r, want{model.CodeFileUnparsable, model.SeverityWarning, "S1.done.json", []string{"limit"}, true})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := badTree(t, tc.kind)
			path := tc.file(root, dir)
			writeBad(t, path, filler(tc.size))
			r, _ := statusOf(t, root)
			tc.check(t, r, path)
		})
	}
}

func lockOverCap(t *testing.T, r model.Run, limit string) {
	t.Helper()
	if len(r.Locks) != 1 || r.Locks[0].Verdict != model.VerdictStale || !containsAll(strings.Join(r.Locks[0].Reasons, "; "), []string{"limit", limit}) {
		t.Errorf("locks %+v; problems:\n%s", r.Locks, problemLines(r))
	}
}

// actionCmd runs an action subcommand through dispatch in e, under the deadline.
func actionCmd(t *testing.T, e env, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	var code int
	within(t, "runwatch "+args[0], func() { code = dispatch(args, &out, &errOut, e) })
	return code, out.String(), errOut.String()
}

// actionTree is a run of the given kind set up for actions, and the environment to act in (a private
// journal); for resumable runs the current stage's item is ticked so that step is allowed.
func actionTree(t *testing.T, kind model.Kind) (root, dir string, e env) {
	t.Helper()
	e = testEnv(t)
	root, dir = badTree(t, kind)
	if kind == model.KindResumable {
		writeBad(t, filepath.Join(dir, "checklist.state.env"), []byte("CB_S1_READY=\"1\"\nCB_S2_VERIFY=\"1\"\n"))
	}
	return root, dir, e
}

// moveOut replaces path by a symlink to a copy outside the run root and returns the copy.
func moveOut(t *testing.T, path string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), filepath.Base(path))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeBad(t, outside, data)
	os.Remove(path)
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	return outside
}

func TestBadInputWriteSafety(t *testing.T) {
	t.Run("symlink out of the run root", func(t *testing.T) {
		cases := []struct {
			kind model.Kind
			file string
			args []string
		}{
			{model.KindResumable, "checklist.state.env", []string{"uncheck", "", "CB_S2_VERIFY", "--yes"}},
			{model.KindResumable, "state.env", []string{"step", "", "--yes"}},
			{model.KindJonggrang, "MANIFEST.yaml", []string{"pause", "", "--yes"}},
		}
		for _, tc := range cases {
			t.Run(tc.args[0]+" "+tc.file, func(t *testing.T) {
				root, dir, e := actionTree(t, tc.kind)
				tc.args[1] = dir
				// Control: with the file in place the same action is planned, so the refusal below is the
				// symlink's doing.
				if code, _, errOut := actionCmd(t, e, append(tc.args, "--dry-run")...); code != exitOK {
					t.Fatalf("control: exit %d stderr %q", code, errOut)
				}
				outside := moveOut(t, filepath.Join(dir, tc.file))
				before := treeHash(t, filepath.Dir(outside), root)
				code, _, errOut := actionCmd(t, e, tc.args...)
				if code != exitRefused || !strings.Contains(errOut, "outside the run root") {
					t.Fatalf("exit %d stderr %q", code, errOut)
				}
				if after := treeHash(t, filepath.Dir(outside), root); after != before {
					t.Fatalf("files changed after a refusal:\n%s", diffLines(before, after))
				}
			})
		}
	})
	t.Run("file owned by another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("giving a file to another user needs root")
		}
		root, dir, e := actionTree(t, model.KindResumable)
		checklist := filepath.Join(dir, "checklist.state.env")
		if err := os.Chown(checklist, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		before := treeHash(t, root)
		code, _, errOut := actionCmd(t, e, "uncheck", dir, "CB_S2_VERIFY", "--yes")
		if code != exitRefused || !containsAll(errOut, []string{"owned by uid 4242", "--force"}) {
			t.Fatalf("exit %d stderr %q", code, errOut)
		}
		if after := treeHash(t, root); after != before {
			t.Fatalf("files changed after a refusal:\n%s", diffLines(before, after))
		}
		code, out, errOut := actionCmd(t, e, "uncheck", dir, "CB_S2_VERIFY", "--yes", "--force")
		data, _ := os.ReadFile(checklist)
		if code != exitOK || !strings.Contains(out, "applied") || !strings.Contains(string(data), `CB_S2_VERIFY="0"`) {
			t.Fatalf("--force: exit %d out %q stderr %q checklist %q", code, out, errOut, data)
		}
	})
	t.Run("read-only touches nothing", func(t *testing.T) {
		rroot, rdir, e := actionTree(t, model.KindResumable)
		jroot, jdir := badTree(t, model.KindJonggrang)
		writeBad(t, filepath.Join(rdir, "run.lock"), []byte(`{"pid": 999999, "run_id": "20260215T000000Z"}`))
		writeBad(t, filepath.Join(jroot, ".jonggrang", "locks", "dev.lock"), []byte(`{"agent_id": "dev", "acquired_at": "2026-02-15T00:00:00.000Z"}`))
		journal := e.getenv("XDG_STATE_HOME")
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		writeBad(t, cfg, []byte("read_only: true\n"))
		commands := [][]string{
			{"unlock", rdir}, {"step", rdir}, {"check", rdir, "CB_S1_READY"}, {"uncheck", rdir, "CB_S2_VERIFY"}, {"undo", rdir},
			{"unlock", jdir}, {"step", jdir}, {"retry", jdir}, {"pause", jdir}, {"resume", jdir}, {"undo", jdir},
		}
		for _, how := range [][]string{{"--read-only"}, {"--config", cfg}} {
			for _, c := range commands {
				before := treeHash(t, rroot, jroot, journal)
				code, _, errOut := actionCmd(t, e, append(append(c, "--yes", "--force"), how...)...)
				if code != exitRefused || !strings.Contains(errOut, "read-only") {
					t.Errorf("%v %v: exit %d stderr %q", c[0], how, code, errOut)
				}
				if after := treeHash(t, rroot, jroot, journal); after != before {
					t.Errorf("%v %v changed files:\n%s", c[0], how, diffLines(before, after))
				}
			}
		}
	})
	t.Run("never writes a file it did not read", func(t *testing.T) {
		_, dir, e := actionTree(t, model.KindResumable)
		checklist := filepath.Join(dir, "checklist.state.env")
		theirs := []byte("CB_S1_READY=\"1\"\nCB_S2_VERIFY=\"1\"\nCB_S2_ADDED_BY_AGENT=\"0\"\n")
		// The agent writes while the person reads the preview; they then confirm.
		e.stdin = &writeOnRead{path: checklist, data: theirs, answer: "y\n"}
		e.stdinTerminal = func() bool { return true }
		code, _, errOut := actionCmd(t, e, "uncheck", dir, "CB_S2_VERIFY")
		if code != exitRefused || !strings.Contains(errOut, "changed on disk since you looked") {
			t.Fatalf("exit %d stderr %q", code, errOut)
		}
		if data, _ := os.ReadFile(checklist); !bytes.Equal(data, theirs) {
			t.Fatalf("the agent's write was overwritten:\n%s", data)
		}
	})
}

// writeOnRead is a terminal whose user answers only after another writer has changed a file.
type writeOnRead struct {
	path   string
	data   []byte
	answer string
	done   bool
}

func (w *writeOnRead) Read(p []byte) (int, error) {
	if !w.done {
		w.done = true
		if err := os.WriteFile(w.path, w.data, 0o644); err != nil {
			return 0, err
		}
	}
	n := copy(p, w.answer)
	w.answer = w.answer[n:]
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// treeHash lists every entry under roots with its type, mode, owner, size, content hash and link target, one
// per line, so two listings differ exactly where something was touched.
func treeHash(t *testing.T, roots ...string) string {
	t.Helper()
	var b strings.Builder
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			st := fi.Sys().(*syscall.Stat_t)
			fmt.Fprintf(&b, "%s %v uid=%d size=%d mtime=%d", p, fi.Mode(), st.Uid, fi.Size(), fi.ModTime().UnixNano())
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				fmt.Fprintf(&b, " -> %s", target)
			case fi.Mode().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(&b, " sha256=%x", sha256.Sum256(data))
			}
			b.WriteByte('\n')
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return b.String()
}

func diffLines(before, after string) string {
	old := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		old[l] = true
	}
	var b strings.Builder
	for _, l := range strings.Split(after, "\n") {
		if !old[l] {
			b.WriteString("  now: " + l + "\n")
		}
	}
	return b.String()
}
