package jonggrang

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"runwatch/model"
)

// newFeature makes an empty project with one feature dir and returns it.
func newFeature(t *testing.T, fid string) (*project, string) {
	t.Helper()
	p := &project{t: t, root: filepath.Join(t.TempDir(), "proj")}
	dir := p.feature(fid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return p, dir
}

// whole ends a hand-written test manifest with the keys every write of the convention holds, so the test
// is about its own point and not about a torn read (TornReasons).
const whole = "agents: {}\nvalidation: {review_passed: false, tests_passed: false, coverage_met: false}\n"

// quickLoader re-reads without the real wait; the re-read itself is tested in the fixture tests.
var quickLoader = loader{retryDelay: time.Millisecond}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(name + ": &" + name + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	// Every field the reader walks points into the bomb.
	b.WriteString("feature_id: f1\nstatus: running\nactive_phases: *i\nvalidation: *i\n")
	b.WriteString("phases:\n  '1': &p {name: setup, status: running, output: {error: *i}, output_files: *i}\n")
	for j := 2; j <= 200; j++ {
		b.WriteString("  '" + itoa(j) + "': *p\n")
	}
	b.WriteString("agents:\n  dev: {role: developer, locked_files: *i}\n")
	return b.String()
}

// aliasAmplifier repeats an alias to a 10,000-entry list under 300 phases: 3 million node visits if each
// alias were followed in full.
func aliasAmplifier() string {
	var b strings.Builder
	b.WriteString("files: &files [")
	for i := 0; i < 10000; i++ {
		b.WriteString("{path: a}, ")
	}
	b.WriteString("]\nfeature_id: f1\nstatus: running\nphases:\n")
	for j := 1; j <= 300; j++ {
		b.WriteString("  '" + itoa(j) + "': {status: running, output_files: *files}\n")
	}
	return b.String()
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return fmtInt(n/10) + string(rune('0'+n%10))
}

func TestBadManifests(t *testing.T) {
	cases := []struct {
		name     string
		content  string
		code     string
		severity model.Severity
		inMsg    string
		check    func(t *testing.T, r model.Run)
	}{
		{name: "empty", content: "", code: model.CodeManifestUnparsable, severity: model.SeverityError, inMsg: "empty"},
		{name: "only comments", content: "# nothing yet\n", code: model.CodeManifestUnparsable, severity: model.SeverityError, inMsg: "empty"},
		{name: "truncated mid-line", content: "feature_id: f1\nstatus: running\nphases:\n  '1':\n    name: 'set", code: model.CodeManifestUnparsable, severity: model.SeverityError, inMsg: "line "},
		{name: "tabs", content: "feature_id: f1\nstatus: running\nphases:\n\t'1': {}\n", code: model.CodeManifestUnparsable, severity: model.SeverityError, inMsg: "tab"},
		{name: "deep flow nesting", content: "feature_id: f1\nphases: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
			code: model.CodeManifestUnparsable, severity: model.SeverityError, inMsg: "depth"},
		{name: "deep nesting under output.error", content: "feature_id: f1\nstatus: failed\nphases:\n  '1':\n    status: failed\n    output:\n      error: " +
			strings.Repeat("{a: ", 5000) + "x" + strings.Repeat("}", 5000) + "\n",
			check: func(t *testing.T, r model.Run) {
				if s := r.Stage("1"); s == nil || !strings.HasPrefix(s.ErrorText(), "{a: {a:") || len(s.ErrorText()) > 5<<10 {
					t.Errorf("structured error = %.80q", r.Stage("1").ErrorText())
				}
			}},
		{name: "alias bomb", content: aliasBomb(), code: model.CodeManifestInvalid, severity: model.SeverityWarning, check: func(t *testing.T, r model.Run) {
			if len(r.Stages) != 200 || r.ID != "f1" {
				t.Errorf("stages %d id %s", len(r.Stages), r.ID)
			}
			if len(r.Problems) > maxNotes+5 {
				t.Errorf("%d problems; the note cap did not hold", len(r.Problems))
			}
		}},
		{name: "alias amplification hits the node budget", content: aliasAmplifier(), code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: "too complex"},
		{name: "several documents", content: "feature_id: f1\nstatus: running\n---\nfeature_id: f2\nstatus: failed\n",
			code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: "several YAML documents", check: func(t *testing.T, r model.Run) {
				if r.ID != "f1" || r.RawStatus != "running" {
					t.Errorf("first document not shown: %s %s", r.ID, r.RawStatus)
				}
			}},
		{name: "phases as a list", content: "feature_id: f1\nstatus: running\ncurrent_phase: 2\nphases:\n  - name: setup\n    status: completed\n  - number: 2\n    name: triage\n    status: running\n",
			code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: "phases is a list", check: func(t *testing.T, r model.Run) {
				if !equalStrings(stageKeys(r), []string{"1", "2"}) || r.Stage("2").Status != model.StageRunning || r.Status != model.StatusRunning {
					t.Errorf("stages %v status %s", stageKeys(r), r.Status)
				}
			}},
		{name: "unknown status values", content: "feature_id: f1\nstatus: exploded\nphases:\n  '1': {name: setup, status: weird}\n" + whole,
			code: model.CodeUnknownStatus, severity: model.SeverityWarning, inMsg: "exploded", check: func(t *testing.T, r model.Run) {
				s := r.Stage("1")
				if r.RawStatus != "exploded" || r.Status != model.StatusUnknown || s.RawStatus() != "weird" || s.Status != model.StagePending {
					t.Errorf("run %s/%s phase %s/%s", r.RawStatus, r.Status, s.RawStatus(), s.Status)
				}
				n := 0
				for _, p := range r.Problems {
					if p.Code == model.CodeUnknownStatus {
						n++
					}
				}
				if n != 2 {
					t.Errorf("%d unknown-status problems, want 2 (run and phase):%s", n, problemList(r))
				}
			}},
		{name: "top level is a list", content: "- feature_id: f1\n", code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: "not a mapping"},
		{name: "duplicate keys", content: "feature_id: f1\nstatus: running\nstatus: failed\n", code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: "defined twice"},
		{name: "duplicate phase", content: "feature_id: f1\nstatus: running\nphases:\n  '1': {status: completed}\n  '1': {status: running}\n", code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: "defined twice"},
		// js-yaml rejects a duplicate key at any depth, so an agent registered twice is as fatal to the
		// convention's reader as a duplicate top-level field.
		{name: "duplicate agent", content: "feature_id: f1\nstatus: running\nphases:\n  '1': {status: running}\nagents:\n  dev-1: {role: developer}\n  dev-1: {role: tester}\n", code: model.CodeManifestInvalid, severity: model.SeverityError, inMsg: `agents: "dev-1" is defined twice (lines 6 and 7)`},
		{name: "timestamp variants", content: "feature_id: f1\nstatus: running\ncreated_at: 1771217415123\nupdated_at: yesterday\nphases:\n" +
			"  '1': {status: completed, started_at: 2024-01-01T00:00:00Z, completed_at: 2024-01-01 10:30:00 +02:00}\n" +
			"  '2': {status: running, started_at: 2024-01-02, completed_at: 'Tue Jan 02 2024 10:00:00 GMT+0100 (Central European Standard Time)'}\n",
			code: model.CodeManifestInvalid, severity: model.SeverityWarning, inMsg: `updated_at: line 4: "yesterday" is not a timestamp`, check: func(t *testing.T, r model.Run) {
				s1, s2 := r.Stage("1"), r.Stage("2")
				if s1.StartedAt == nil || !s1.StartedAt.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) ||
					s1.CompletedAt == nil || !s1.CompletedAt.Equal(time.Date(2024, 1, 1, 8, 30, 0, 0, time.UTC)) ||
					s2.StartedAt == nil || !s2.StartedAt.Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)) ||
					s2.CompletedAt == nil || !s2.CompletedAt.Equal(time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)) {
					t.Errorf("times: %v %v %v %v", s1.StartedAt, s1.CompletedAt, s2.StartedAt, s2.CompletedAt)
				}
				if c := r.Jonggrang.CreatedAt; c == nil || !c.Equal(time.UnixMilli(1771217415123)) {
					t.Errorf("epoch created_at = %v", c)
				}
				if r.UpdatedAt.IsZero() {
					t.Error("updated_at should fall back to the file's mtime")
				}
			}},
		{name: "fractional current phase", content: "feature_id: f1\nstatus: running\ncurrent_phase: 6.5\nphases:\n  '7': {status: pending}\n  '6.5': {status: running}\n  '6': {status: completed}\n" + whole,
			check: func(t *testing.T, r model.Run) {
				if r.CurrentStage != "6.5" || !equalStrings(stageKeys(r), []string{"6", "6.5", "7"}) || len(r.Problems) != 0 {
					t.Errorf("current %q stages %v problems:%s", r.CurrentStage, stageKeys(r), problemList(r))
				}
			}},
		{name: "current phase as float", content: "feature_id: f1\nstatus: running\ncurrent_phase: 8.0\nphases:\n  '8': {status: running}\n" + whole,
			check: func(t *testing.T, r model.Run) {
				if r.CurrentStage != "8" || len(r.Problems) != 0 {
					t.Errorf("current %q problems:%s", r.CurrentStage, problemList(r))
				}
			}},
		{name: "current phase not among phases", content: "feature_id: f1\nstatus: running\ncurrent_phase: 99\nphases:\n  '1': {status: running}\n",
			code: model.CodeCurrentStageUnknown, severity: model.SeverityError, inMsg: "99"},
		{name: "wrong field types", content: "feature_id: [f1]\nstatus: running\nhas_ui: yes please\ncontext_usage: high\nvalidation: {review_passed: maybe}\nagents: [dev]\nphases:\n  '1': {status: running, output_files: {path: a}}\n",
			code: model.CodeManifestInvalid, severity: model.SeverityWarning, inMsg: "has_ui", check: func(t *testing.T, r model.Run) {
				if r.ID != "f1" || len(r.Flags) != 1 || r.Flags[0].Raw != "maybe" || r.Jonggrang.ContextUsage != nil {
					t.Errorf("id %s flags %+v", r.ID, r.Flags)
				}
				if len(r.Problems) < 6 {
					t.Errorf("each wrong field should be named:%s", problemList(r))
				}
			}},
		{name: "no phases", content: "feature_id: f1\nstatus: running\n", code: model.CodeNoStages, severity: model.SeverityWarning},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, dir := newFeature(t, "f1")
			p.write(filepath.Join(dir, ManifestName), tc.content)
			r := quickLoader.load(dir, realEnv())
			if tc.code != "" {
				var found *model.Problem
				for i, pr := range r.Problems {
					if pr.Code == tc.code && strings.Contains(pr.Message, tc.inMsg) {
						found = &r.Problems[i]
						break
					}
				}
				switch {
				case found == nil:
					t.Errorf("no %s problem containing %q:%s", tc.code, tc.inMsg, problemList(r))
				case tc.severity != "" && found.Severity != tc.severity:
					t.Errorf("%s severity = %s, want %s", tc.code, found.Severity, tc.severity)
				case !strings.Contains(found.Message, filepath.Join("f1", ManifestName)):
					t.Errorf("message %q does not name the file", found.Message)
				}
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestManifestSpecialFiles(t *testing.T) {
	t.Run("50 MiB", func(t *testing.T) {
		_, dir := newFeature(t, "f1")
		f, err := os.Create(filepath.Join(dir, ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(50 << 20); err != nil { // sparse: the size is what matters
			t.Fatal(err)
		}
		f.Close()
		r := quickLoader.load(dir, realEnv())
		if pr := problem(t, r, model.CodeManifestTooLarge); pr.Severity != model.SeverityError || !strings.Contains(pr.Message, "52428800 bytes") {
			t.Errorf("problem = %+v", pr)
		}
		if len(r.Stages) != 0 || r.Status != model.StatusBlocked {
			t.Errorf("a too-large manifest must not be loaded: %d stages, status %s", len(r.Stages), r.Status)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, dir := newFeature(t, "f1")
		if err := os.Mkdir(filepath.Join(dir, ManifestName), 0o755); err != nil {
			t.Fatal(err)
		}
		r := quickLoader.load(dir, realEnv())
		if pr := problem(t, r, model.CodeManifestUnreadable); !strings.Contains(pr.Message, "not a regular file") {
			t.Errorf("problem = %+v", pr)
		}
	})
	t.Run("fifo does not block", func(t *testing.T) {
		_, dir := newFeature(t, "f1")
		if err := syscall.Mkfifo(filepath.Join(dir, ManifestName), 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		r := quickLoader.load(dir, realEnv())
		problem(t, r, model.CodeManifestUnreadable)
	})
	t.Run("symlink to /dev/zero does not hang", func(t *testing.T) {
		_, dir := newFeature(t, "f1")
		if err := os.Symlink("/dev/zero", filepath.Join(dir, ManifestName)); err != nil {
			t.Skip(err)
		}
		r := quickLoader.load(dir, realEnv())
		problem(t, r, model.CodeManifestUnreadable)
	})
	t.Run("progress.txt is a fifo", func(t *testing.T) {
		p, dir := newFeature(t, "f1")
		p.write(filepath.Join(dir, ManifestName), "feature_id: f1\nstatus: running\nphases: {'1': {status: running}}\n")
		if err := syscall.Mkfifo(filepath.Join(dir, "progress.txt"), 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		r := quickLoader.load(dir, realEnv())
		problem(t, r, model.CodeFileUnparsable)
	})
}

// lockProject is a project with one running feature that registers no agents, so every lock shows on it.
func lockProject(t *testing.T) (*project, string) {
	p, dir := newFeature(t, "f1")
	p.write(filepath.Join(dir, ManifestName), "feature_id: f1\nstatus: running\ncurrent_phase: 1\nphases:\n  '1': {name: setup, status: running}\n"+whole)
	return p, dir
}

func TestBadLocks(t *testing.T) {
	now := time.Now()
	iso := func(d time.Duration) string { return now.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }
	cases := []struct {
		name    string
		content string
		verdict model.Verdict
		reason  string
		check   func(t *testing.T, l model.Lock)
	}{
		{name: "empty", content: "", verdict: model.VerdictStale, reason: "empty file"},
		{name: "whitespace", content: "\n  \n", verdict: model.VerdictStale, reason: "empty file"},
		{name: "binary", content: "\x00\xff\xfe{", verdict: model.VerdictStale, reason: "binary content"},
		{name: "json null", content: "null", verdict: model.VerdictStale, reason: "not a JSON object"},
		{name: "json list", content: `["a"]`, verdict: model.VerdictStale, reason: "not a JSON object"},
		{name: "truncated json", content: `{"agent_id": "dev", "files": ["a`, verdict: model.VerdictStale, reason: "unparsable"},
		{name: "trailing garbage", content: `{"agent_id": "dev"} {"x":1}`, verdict: model.VerdictStale, reason: "text follows"},
		{name: "pid 0 fresh", content: `{"agent_id":"dev","files":[],"acquired_at":"` + iso(-5*time.Minute) + `","pid":0}`, verdict: model.VerdictLive, reason: "within 30m"},
		{name: "pid -1", content: `{"agent_id":"dev","acquired_at":"` + iso(-time.Minute) + `","pid":-1}`, verdict: model.VerdictUnknown, reason: "not a valid process id"},
		{name: "huge pid", content: `{"agent_id":"dev","acquired_at":"` + iso(-time.Minute) + `","pid":99999999999999999999999}`, verdict: model.VerdictUnknown, reason: "not a valid process id"},
		{name: "fractional pid", content: `{"agent_id":"dev","acquired_at":"` + iso(-time.Minute) + `","pid":1.5}`, verdict: model.VerdictUnknown, reason: "not a valid process id"},
		{name: "pid as text", content: `{"agent_id":"dev","acquired_at":"` + iso(0) + `","pid":"` + itoa(os.Getpid()) + `"}`, verdict: model.VerdictLive, reason: "is running",
			check: func(t *testing.T, l model.Lock) {
				if l.PID != os.Getpid() {
					t.Errorf("pid = %d", l.PID)
				}
			}},
		{name: "timestamp in the future", content: `{"agent_id":"dev","acquired_at":"` + iso(3*time.Hour) + `"}`, verdict: model.VerdictUnknown, reason: "in the future and there is no pid"},
		{name: "timestamp in another format", content: `{"agent_id":"dev","acquired_at":"16/02/2026 05:00"}`, verdict: model.VerdictUnknown, reason: "is not a timestamp"},
		{name: "epoch milliseconds", content: `{"agent_id":"dev","acquired_at":` + itoa(int(now.Add(-2*time.Hour).UnixMilli())) + `}`, verdict: model.VerdictStale, reason: "exceeds 30m"},
		{name: "wrong field types", content: `{"agent_id":7,"files":"a.ts","acquired_at":"` + iso(-time.Minute) + `"}`, verdict: model.VerdictLive, reason: "agent_id is not text",
			check: func(t *testing.T, l model.Lock) {
				if l.Holder != "odd" || !contains(l.Reasons, "files is not a list of paths") {
					t.Errorf("holder %q reasons %q", l.Holder, l.Reasons)
				}
			}},
		{name: "too large", content: `{"agent_id":"dev","files":["` + strings.Repeat("a", maxLockBytes) + `"]}`, verdict: model.VerdictStale, reason: "limit",
			check: func(t *testing.T, l model.Lock) {
				if len(l.Raw) != 0 {
					t.Errorf("raw of an unread lock should be empty, has %d bytes", len(l.Raw))
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, dir := lockProject(t)
			p.write(p.lockPath("odd.lock"), tc.content)
			r := quickLoader.load(dir, realEnv())
			l := findLock(t, r, "odd.lock")
			if l.Verdict != tc.verdict || !strings.Contains(strings.Join(l.Reasons, "; "), tc.reason) {
				t.Errorf("verdict %s reasons %q, want %s with %q", l.Verdict, l.Reasons, tc.verdict, tc.reason)
			}
			if len(l.Raw) > maxLockRawBytes+64 {
				t.Errorf("raw not capped: %d bytes", len(l.Raw))
			}
			if tc.check != nil {
				tc.check(t, l)
			}
		})
	}
}

func TestLockSpecialFiles(t *testing.T) {
	p, dir := lockProject(t)
	if err := os.MkdirAll(p.lockPath("dir.lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.write(p.lockPath("notes.txt"), "not a lock")
	r := quickLoader.load(dir, realEnv())
	if len(r.Locks) != 0 {
		t.Errorf("locks = %v", lockNames(r))
	}
	if pr := problem(t, r, model.CodeLockUnreadable); !strings.Contains(pr.Message, "dir.lock") {
		t.Errorf("problem = %+v", pr)
	}
}

// A kernel thread's pid exists but is never an agent: the lock is stale, and the reason says why.
func TestLockOnKernelThreadPID(t *testing.T) {
	if data, err := os.ReadFile("/proc/2/stat"); err != nil || !strings.Contains(string(data), "(kthreadd)") {
		t.Skip("no kthreadd at pid 2 in this pid namespace")
	}
	p, dir := lockProject(t)
	p.setLock("kthread.lock", "kthread", nil, time.Now().Add(-time.Minute), 2)
	r := quickLoader.load(dir, realEnv())
	l := findLock(t, r, "kthread.lock")
	if l.Verdict != model.VerdictStale || !strings.Contains(strings.Join(l.Reasons, ";"), "kernel thread") || l.PID != 2 {
		t.Errorf("lock = %+v; want stale because pid 2 is a kernel thread", l)
	}
}

func TestBadSideFiles(t *testing.T) {
	p, dir := lockProject(t)
	p.write(filepath.Join(dir, "08-developer-task-001.json"), `{"phase": 8, "role": "developer", "output": {`)
	p.write(filepath.Join(dir, "09-reviewer-report.json"), `{"phase": "09", "role": "reviewer", "output": {"approved": false, "score": 6, "required_fixes": ["escape output", {"description": "add CSRF token"}], "violations": [{"rule": "x"}]}}`)
	p.write(filepath.Join(dir, "13-tester-results.json"), `{"phase": 13, "role": "tester", "output": {"tests_passed": false, "total": 12, "passed": 10, "failed": 2, "coverage": 81.5, "failed_tests": ["login rejects empty password", {"name": "session renews"}]}}`)
	p.write(filepath.Join(dir, "jonggrang-tasks.json"), `{"tasks": 7}`)
	p.write(p.ephemeral("feedback-loop-state.json"), `{"active": "yes"}`)
	p.write(p.ephemeral("compaction-state.json"), `{"status": "block", "ratio": 0.91, "message": "BLOCK"}`)
	p.write(p.ephemeral("orchestration-run.json"), `{"groups": [{"feature_id": "f1", "status": "sleeping", "pid": null}]}`)
	var progress strings.Builder
	progress.WriteString("## Interrupted run (2026-01-01T00:00:00.000Z)\n")
	for i := 0; i < 50000; i++ {
		progress.WriteString("line " + itoa(i) + "\n")
	}
	progress.WriteString("## Interrupted run (2026-02-16T05:10:00.000Z)\nlast words\n" + strings.Repeat("x", 5000) + "\n")
	p.write(filepath.Join(dir, "progress.txt"), progress.String())

	r := quickLoader.load(dir, realEnv())
	unparsable := map[string]bool{}
	for _, pr := range r.Problems {
		if pr.Code == model.CodeFileUnparsable {
			unparsable[filepath.Base(pr.Path)] = true
			if !strings.Contains(pr.Message, filepath.Base(pr.Path)) {
				t.Errorf("message does not name the file: %q", pr.Message)
			}
		}
	}
	for _, f := range []string{"08-developer-task-001.json", "jonggrang-tasks.json", "feedback-loop-state.json"} {
		if !unparsable[f] {
			t.Errorf("no file-unparsable problem for %s:%s", f, problemList(r))
		}
	}
	d := r.Jonggrang
	if len(d.PhaseOutputs) != 2 {
		t.Fatalf("phase outputs = %+v", d.PhaseOutputs)
	}
	rev, tst := d.PhaseOutputs[0], d.PhaseOutputs[1]
	if rev.Phase != "9" || rev.Approved == nil || *rev.Approved || !equalStrings(rev.RequiredFix, []string{"escape output", "add CSRF token"}) ||
		!contains(rev.Summary, "changes requested (score 6)") || !contains(rev.Summary, "1 violation") {
		t.Errorf("reviewer = %+v", rev)
	}
	if tst.TestsPassed == nil || *tst.TestsPassed || !equalStrings(tst.FailedTests, []string{"login rejects empty password", "session renews"}) ||
		!contains(tst.Summary, "tests: 10 passed, 2 failed of 12, coverage 81.5") {
		t.Errorf("tester = %+v", tst)
	}
	if pr := problem(t, r, model.CodeCompactionBlock); pr.Severity != model.SeverityWarning {
		t.Errorf("compaction = %+v", pr)
	}
	if len(r.Gates) != 1 || !r.Gates[0].Blocked || r.Gates[0].Name != "compaction" {
		t.Errorf("gates = %+v", r.Gates)
	}
	if pr := problem(t, r, model.CodeUnknownStatus); !strings.Contains(pr.Message, "sleeping") {
		t.Errorf("group status problem = %+v", pr)
	}
	if n := len(d.ProgressTail); n != progressTailLines || d.ProgressTail[n-2] != "last words" || len(d.ProgressTail[n-1]) > maxProgressLine+40 {
		t.Errorf("progress tail: %d lines, last %.40q", n, d.ProgressTail[n-1])
	}
	// Only the tail window is read: the first interruption is outside it.
	if len(d.Interruptions) != 1 || !d.Interruptions[0].Equal(time.Date(2026, 2, 16, 5, 10, 0, 0, time.UTC)) {
		t.Errorf("interruptions = %v", d.Interruptions)
	}
}

// The server's snapshot is read leniently: a pid written as text and a structured error still describe the
// group, and a dead group working on this feature is a crash sign.
func TestOrchestrationLenientGroup(t *testing.T) {
	p, dir := lockProject(t)
	dead := deadPID(t)
	p.write(p.ephemeral("orchestration-run.json"), `{"status":"running","groups":[`+
		`{"feature_id":"f1","status":"running","pid":"`+itoa(dead)+`","error":{"message":"worker lost"}},`+
		`{"feature_id":"other","status":"queued","pid":null},`+
		`{"feature_id":"done","status":"completed","pid":1}]}`)
	r := quickLoader.load(dir, realEnv())
	g := r.Jonggrang.Groups
	if len(g) != 3 || g[0].PID != dead || g[0].Alive || !g[0].Interrupted || g[0].Error != "worker lost" ||
		!g[1].Interrupted || g[2].Interrupted {
		t.Fatalf("groups = %+v", g)
	}
	if len(r.CrashSigns) != 1 || !strings.Contains(r.CrashSigns[0], "worker lost") || r.Status != model.StatusStalled {
		t.Errorf("crash signs %q status %s", r.CrashSigns, r.Status)
	}
	if pr := problem(t, r, model.CodeGroupInterrupted); pr.Severity != model.SeverityWarning {
		t.Errorf("problem = %+v", pr)
	}
}

func TestCompletedWithOpenPhases(t *testing.T) {
	p, dir := newFeature(t, "f1")
	p.write(filepath.Join(dir, ManifestName), "feature_id: f1\nstatus: completed\ncurrent_phase: null\nphases:\n  '1': {status: completed}\n  '2': {status: pending}\n"+whole)
	r := quickLoader.load(dir, realEnv())
	if pr := problem(t, r, model.CodeManifestInvalid); !strings.Contains(pr.Message, "phases 2 are neither") {
		t.Errorf("problem = %+v", pr)
	}
	if r.Status != model.StatusUnknown {
		t.Errorf("status = %s", r.Status)
	}
}

// Names come from agents and from disk: newlines, escapes and invalid UTF-8 are kept as data (the UI
// neutralises them), and a feature dir that vanished is a missing manifest, not a crash.
func TestHostileNamesAndVanishedDir(t *testing.T) {
	fid := "f\x1b[31m\nred\xff"
	p, dir := newFeature(t, fid)
	p.write(filepath.Join(dir, ManifestName), "feature_id: f1\nstatus: running\nphases: {'1': {status: running}}\n")
	name := "agent\nwith\x1b]52;c;AAAA\x07\xfe.lock"
	p.write(p.lockPath(name), "")
	r := quickLoader.load(dir, realEnv())
	l := findLock(t, r, name)
	if l.Holder != strings.TrimSuffix(name, ".lock") || l.Verdict != model.VerdictStale {
		t.Errorf("lock = %+v", l)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r = quickLoader.load(dir, realEnv())
	if r.ID != fid || !hasProblem(r, model.CodeManifestMissing) {
		t.Errorf("vanished dir: id %q problems:%s", r.ID, problemList(r))
	}
}
