// Tests that hostile files and bad cases show their problem and never reach the terminal raw.

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/state/fixturetest"
	"runwatch/ui/app"
)

// hostileFileRuns reads real runs whose files carry hostile text: the two runs of testdata/bad/hostile
// (escape sequences, C1 controls, bidi overrides and invalid UTF-8 in every field the readers take from
// files), one resumable run per run.log of testdata/bad/log (binary, invalid UTF-8, escapes, no final
// newline) and two run folders with hostile names. They are read by the real readers (state.Discover and state.Load), from a copy, so planning an
// action on them can never touch the repository.
func hostileFileRuns(t *testing.T) []model.Run {
	t.Helper()
	bad := filepath.Join("..", "testdata", "bad")
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "hostile"), os.DirFS(filepath.Join(bad, "hostile"))); err != nil {
		t.Fatal(err)
	}
	logs, err := os.ReadDir(filepath.Join(bad, "log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		dir := filepath.Join(root, "logs", strings.TrimSuffix(l.Name(), ".log")+"-20260215T000000Z")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(bad, "base", "resumable"))); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(bad, "log", l.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The hostile run's lock (of unknown liveness, hostile host) makes every action refuse; a copy without
	// it lets the confirmations, whose previews quote the files' bytes, open.
	unlocked := filepath.Join(root, "unlocked", "hostile-unlocked-20260215T000000Z")
	if err := os.CopyFS(unlocked, os.DirFS(filepath.Join(bad, "hostile", "resumable", "hostile-run-20260215T000000Z"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(unlocked, "run.lock")); err != nil {
		t.Fatal(err)
	}
	// A lock file name is its holder's name, shown in the detail pane.
	lockName := filepath.Join(root, "hostile", "jonggrang", ".jonggrang", "locks", "agent\nwith\x1b]52;c;AAAA\x07\xfe.lock")
	if err := os.WriteFile(lockName, []byte(`{"agent_id": "x", "pid": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Folder names are run ids: a newline with a title change, and invalid UTF-8.
	for _, name := range []string{"run\nwith newline\x1b]0;title\x07-20260215T000000Z", "bad-utf8-\xff\xfe-20260215T000000Z"} {
		if err := os.CopyFS(filepath.Join(root, "names", name), os.DirFS(filepath.Join(bad, "base", "resumable"))); err != nil {
			t.Fatal(err)
		}
	}
	locs, err := state.Discover([]string{root}, 0)
	if err != nil {
		t.Fatal(err)
	}
	runList := fixturetest.LoadAll(locs, state.NewEnv(0))
	if len(runList) != 5+len(logs) {
		t.Fatalf("read %d runs, want %d", len(runList), 5+len(logs))
	}
	return runList
}

// TestHostileFilesNeverReachTheTerminal renders runs read from hostile files through the real dashboard:
// every run selected in turn, every pane focused, its log opened from disk by the timeline's own source,
// error jumps, a search, the help, the resume brief, and the confirmation of each action (whose preview is a
// diff of file bytes), at several sizes and in a colour and the mono theme. Each frame may hold only the SGR
// styling runwatch adds itself (assertOnlySGR). TestHostileTextNeverReachesTerminal covers the same with
// model values built in memory; this one proves the path from the bytes on disk.
func TestHostileFilesNeverReachTheTerminal(t *testing.T) {
	t.Parallel()
	journal := filepath.Join(t.TempDir(), "journal.jsonl") // what an action applies is recorded here
	runList := hostileFileRuns(t)
	env := func() model.Env { return state.NewEnv(0) }
	frames := 0
	// The hostile text must reach the screen, neutralised, or the test would pass on an empty frame.
	seen := map[string]bool{}
	markers := []string{"cursor moved", "clipboard write", "title change", "hyperlink", "DCS query", "C1 CSI",
		"<U+202E>gnp.exe", "after binary", "last words", "\uFFFD", "^G", "^H",
		"Confirm ", "[y/N]", "Resume brief", "run^Jwith newline", "bad-utf8-\uFFFD\uFFFD-"}
	check := func(m Model) {
		t.Helper()
		v := m.View()
		frame := v.Content
		assertOnlySGR(t, frame)
		assertParsedOnlySGR(t, frame)
		// The window title is sent in an OSC of its own: no run text may be in it unsanitised.
		assertOnlySGR(t, v.WindowTitle)
		frames++
		plainFrame := ansi.Strip(frame)
		for _, mk := range markers {
			seen[mk] = seen[mk] || strings.Contains(plainFrame, mk)
		}
	}
	looks := []struct {
		theme string
		w, h  int
	}{{"mono", 160, 48}, {"dark", 100, 30}, {"light", 60, 18}}
	if testing.Short() {
		looks = looks[:1] // every marker is seen in the widest; the themes and sizes are the full run's
	}
	for _, look := range looks {
		m := newTestModel(t, look.w, look.h, runList, app.Options{
			Theme: look.theme, OpenLog: OpenIndexedLog, Env: env,
			Actor: NewActor(action.Options{JournalPath: journal}, env),
		})
		check(m)
		for range runList {
			m = send(t, m, press("enter")) // open the run: detail pane
			check(m)
			// Every action but U (unlock, which is TestHostileLockHolderInTypedConfirmation's), then every
			// detail row with a tick tried on each; a confirmation that opens is declined.
			ks := []string{"S", "R", "P", "Z"}
			for range 16 {
				ks = append(ks, "j", "space")
			}
			for _, k := range ks {
				m = send(t, m, press(k))
				check(m)
				if m.confirmDialog() != nil {
					m = send(t, m, press("esc"))
					check(m)
				}
			}
			m = send(t, m, press("b"))
			check(m)
			m = send(t, m, press("esc"))
			m = send(t, m, press("tab")) // timeline, read from run.log on disk
			check(m)
			for _, k := range []string{"g", "e", "e", "E", "t", "G", "k", "/", "s", "t", "a", "g", "e", "enter", "n", "N", "?", "?"} {
				m = send(t, m, press(k))
				check(m)
			}
			m = send(t, m, press("tab")) // back to the runs list, next run
			if m.app.Focus != app.PaneRuns {
				t.Fatalf("lost track of the panes: focus %s", m.app.Focus)
			}
			m = send(t, m, press("j"))
			check(m)
		}
	}
	for _, mk := range markers {
		if !seen[mk] {
			t.Errorf("no frame showed %q", mk)
		}
	}
	t.Logf("%d frames checked", frames)
}

// TestHostileLockHolderInTypedConfirmation: clearing a lock of unknown liveness asks to type its holder, a
// name taken from the lock file. The dialog must show it neutralised like every other file value.
func TestHostileLockHolderInTypedConfirmation(t *testing.T) {
	t.Parallel()
	journal := filepath.Join(t.TempDir(), "journal.jsonl") // what an action applies is recorded here
	env := func() model.Env { return state.NewEnv(0) }
	var hostileRuns []model.Run
	for _, r := range hostileFileRuns(t) {
		if strings.HasPrefix(r.ID, "hostile-") && len(r.Locks) > 0 {
			hostileRuns = append(hostileRuns, r)
		}
	}
	if len(hostileRuns) != 2 {
		t.Fatalf("%d hostile runs with locks, want 2", len(hostileRuns))
	}
	m := newTestModel(t, 160, 48, hostileRuns, app.Options{Env: env, Actor: NewActor(action.Options{JournalPath: journal}, env)})
	for range hostileRuns {
		m = send(t, m, press("enter"))
		for range 12 { // onto the lock row: unlock then names that lock
			m = send(t, m, press("j"))
			m = send(t, m, press("U"))
			assertOnlySGR(t, m.View().Content)
			m = send(t, m, press("esc"))
			if m.app.Focus != app.PaneDetail {
				m = send(t, m, press("enter"))
			}
		}
		m = send(t, m, press("esc"))
		m = send(t, m, press("j"))
	}
}

// badCaseRuns reads one run per case file of the bad-input matrix (testdata/bad: manifests, state files,
// checklists, locks of both conventions), each a copy of a healthy base run with that one file replaced.
func badCaseRuns(t *testing.T) []model.Run {
	t.Helper()
	bad := filepath.Join("..", "testdata", "bad")
	root := t.TempDir()
	feature := filepath.Join(".jonggrang", ".output", "features", "bad-feature")
	families := []struct {
		dir, base string
		target    func(name string) string
	}{
		{"manifest", "jonggrang", func(string) string { return filepath.Join(feature, "MANIFEST.yaml") }},
		{"state", "resumable", func(string) string { return "state.env" }},
		{"checklist", "resumable", func(string) string { return "checklist.state.env" }},
		{filepath.Join("lock", "jonggrang"), "jonggrang", func(n string) string { return filepath.Join(".jonggrang", "locks", n) }},
		{filepath.Join("lock", "resumable"), "resumable", func(string) string { return "run.lock" }},
	}
	n := 0
	for _, fam := range families {
		files, err := os.ReadDir(filepath.Join(bad, fam.dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			n++
			dir := filepath.Join(root, strings.ReplaceAll(fam.dir, string(filepath.Separator), "-")+"-"+strings.TrimSuffix(f.Name(), filepath.Ext(f.Name()))+"-20260215T000000Z")
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(bad, "base", fam.base))); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(bad, fam.dir, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fam.target(f.Name())), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	locs, err := state.Discover([]string{root}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != n {
		t.Fatalf("found %d runs, want %d", len(locs), n)
	}
	return fixturetest.LoadAll(locs, state.NewEnv(0))
}

// TestEveryBadCaseShowsItsProblem opens each run of the bad-input matrix in the dashboard: its detail pane
// must show the problems the readers found (by code), and the frame must stay clean.
func TestEveryBadCaseShowsItsProblem(t *testing.T) {
	t.Parallel()
	runList := badCaseRuns(t)
	m := newTestModel(t, 220, 90, runList, app.Options{OpenLog: OpenIndexedLog})
	shown := 0
	for range runList {
		run := m.app.Runs[m.app.Selected]
		m = send(t, m, press("enter"))
		frame := m.View().Content
		assertOnlySGR(t, frame)
		plainFrame := ansi.Strip(frame)
		for _, p := range run.Problems {
			if !strings.Contains(plainFrame, p.Code) {
				t.Errorf("%s: problem %s not shown in the detail pane", run.ID, p.Code)
			}
		}
		shown += len(run.Problems)
		m = send(t, m, press("esc"))
		m = send(t, m, press("j"))
	}
	if shown < len(runList) {
		t.Errorf("only %d problems over %d bad runs", shown, len(runList))
	}
}

// assertParsedOnlySGR is a second opinion on assertOnlySGR from a real parser: the frame is walked with
// charmbracelet/x/ansi's decoder (the one the renderer's width maths uses), and every zero-width sequence
// must be a newline or a CSI ending in 'm' (SGR).
func assertParsedOnlySGR(t *testing.T, frame string) {
	t.Helper()
	var st byte
	for rest := frame; rest != ""; {
		seq, width, n, next := ansi.DecodeSequence(rest, st, nil)
		if width == 0 && seq != "\n" && !(strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "m")) {
			i := len(frame) - len(rest)
			t.Fatalf("sequence %q at byte %d is not runwatch's styling: …%q…", seq, i, frame[max(0, i-30):min(len(frame), i+30)])
		}
		st, rest = next, rest[n:]
	}
}
