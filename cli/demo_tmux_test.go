package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
	"runwatch/state/journal"
	"runwatch/ui/keys"
)

// tmuxDemo drives the real runwatch binary in a real terminal: a tmux server on a private socket, so the
// test never touches the person's own tmux.
type tmuxDemo struct {
	t      *testing.T
	socket string
	env    []string
	keys   keys.KeyMap
}

func (d *tmuxDemo) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", d.socket}, args...)...)
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (d *tmuxDemo) must(args ...string) string {
	d.t.Helper()
	out, err := d.tmux(args...)
	if err != nil {
		d.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (d *tmuxDemo) screen() string { out, _ := d.tmux("capture-pane", "-p", "-t", "demo"); return out }

// waitScreen polls the screen until cond holds. The deadline only bounds a broken run; nothing is timed.
func (d *tmuxDemo) waitScreen(what string, cond func(screen string) bool) string {
	d.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := d.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("gave up waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// within reports whether cond holds on the screen before d passes.
func (d *tmuxDemo) within(wait time.Duration, cond func(screen string) bool) bool {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if cond(d.screen()) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func (d *tmuxDemo) waitText(text string) string {
	d.t.Helper()
	return d.waitScreen(strconv.Quote(text), func(s string) bool { return strings.Contains(s, text) })
}

// press sends the first key the dashboard's keymap binds to action, so the test follows the keymap.
func (d *tmuxDemo) press(action string) {
	d.t.Helper()
	for _, b := range d.keys.Bindings {
		if b.Action == action && len(b.Keys) > 0 {
			d.send(b.Keys[0])
			return
		}
	}
	d.t.Fatalf("keymap binds no key to %s", action)
}

// send translates a Bubble Tea key name into tmux's.
func (d *tmuxDemo) send(key string) {
	d.t.Helper()
	names := map[string]string{"space": "Space", "tab": "Tab", "shift+tab": "BTab", "esc": "Escape", "enter": "Enter", "up": "Up", "down": "Down"}
	if n, ok := names[key]; ok {
		d.must("send-keys", "-t", "demo", n)
		return
	}
	d.must("send-keys", "-t", "demo", "-l", key)
}

func (d *tmuxDemo) typeText(s string) { d.must("send-keys", "-t", "demo", "-l", s) }

// focus moves the focus to a pane by pressing next-pane until the footer names it.
func (d *tmuxDemo) focus(pane string) {
	d.t.Helper()
	for i := 0; i < 4; i++ {
		if strings.Contains(d.screen(), "focus "+pane) {
			return
		}
		d.press(keys.ActNextPane)
		time.Sleep(150 * time.Millisecond)
	}
	d.waitText("focus " + pane)
}

// selectRun filters the runs pane down to the runs matching text.
func (d *tmuxDemo) selectRun(text string) {
	d.t.Helper()
	d.focus("Runs")
	if regexp.MustCompile(`Runs \d+ of \d+ /`).MatchString(d.screen()) {
		d.press(keys.ActBack) // clear the earlier filter
		// A lone ESC followed at once by another key reads as alt+key; let the terminal parser time out.
		time.Sleep(500 * time.Millisecond)
		d.waitScreen("the filter to clear", func(s string) bool {
			return !strings.Contains(s, " of ") || !regexp.MustCompile(`Runs \d+ of \d+ /`).MatchString(s)
		})
	}
	d.press(keys.ActFilter)
	d.typeText(text)
	d.send("enter")
	d.waitScreen("the runs pane filtered to "+text, func(s string) bool {
		return regexp.MustCompile(`Runs 1 of \d+ /` + regexp.QuoteMeta(text)).MatchString(s)
	})
}

// confirm waits for the confirmation dialog, answers yes, and waits until the change is on disk (what the
// dashboard says about it may be reworded; the files are the point).
func (d *tmuxDemo) confirm(what string, onDisk func() bool) {
	d.t.Helper()
	d.waitText("[y/N]")
	d.send("y")
	deadline := time.Now().Add(30 * time.Second)
	for !onDisk() {
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: not on disk after confirming; screen:\n%s", what, d.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The file is written before the action has released its lock and journaled; the next key is pressed
	// once the dashboard says the action is done, as a person would wait for it.
	d.waitText("done: ")
}

// envValue reads one key of a state.env-style file ("" when absent or unreadable).
func envValue(path, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `="([^"]*)"$`).FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func (d *tmuxDemo) start(t *testing.T, command string) string {
	exitFile := filepath.Join(t.TempDir(), "exit")
	d.must("new-session", "-d", "-x", "120", "-y", "40", "-s", "demo",
		fmt.Sprintf("%s 2>%s.stderr; echo $? > %s", command, exitFile, exitFile))
	return exitFile
}

func (d *tmuxDemo) waitExit(exitFile string) int {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, err := os.ReadFile(exitFile)
		if err == nil && bytes.HasSuffix(data, []byte("\n")) {
			code, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			if code != 0 {
				stderr, _ := os.ReadFile(exitFile + ".stderr")
				d.t.Errorf("runwatch demo exited %d; stderr:\n%s", code, stderr)
			}
			return code
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("runwatch demo did not exit; screen:\n%s", d.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// builtRunwatch is the real binary, built once for every test of the process that drives it: each build
// linked a binary of its own (a minute of the package's time under -race). Tests only run it and give its
// folder as a PATH entry; none writes there. TestMain removes it.
var builtRunwatch builtBinary

type builtBinary struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// buildRunwatch is the real runwatch binary, built from this checkout. Under -short it skips the test: the
// tests that drive the real binary are the slow ones, and the full run has them.
func buildRunwatch(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("drives the built binary: not under -short")
	}
	b := &builtRunwatch
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatalf("go build: %v\n%s", b.err, b.out)
	}
	return b.bin
}

func (b *builtBinary) build() {
	if b.dir, b.err = os.MkdirTemp("", "runwatch-test-bin-"); b.err != nil {
		return
	}
	b.bin = filepath.Join(b.dir, "runwatch")
	// go test puts its own GOROOT/bin first on PATH, so this is the toolchain running the test.
	b.out, b.err = exec.Command("go", "build", "-o", b.bin, "..").CombinedOutput()
}

// removeBuiltRunwatch removes the binary buildRunwatch built, if any.
func removeBuiltRunwatch() {
	builtRunwatch.once.Do(func() {}) // waits for a build TestMain started
	if builtRunwatch.dir != "" {
		os.RemoveAll(builtRunwatch.dir)
	}
}

func newTmuxDemo(t *testing.T) *tmuxDemo {
	if testing.Short() {
		t.Skip("drives the binary in tmux: not under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	home := t.TempDir()
	d := &tmuxDemo{
		t: t, socket: filepath.Join(home, "tmux.sock"), keys: keys.DefaultKeyMap(false),
		// No user config (it could remap keys), a private journal, and TMPDIR where the test can see it.
		env: append(withoutTmux(os.Environ()), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
			"XDG_STATE_HOME="+filepath.Join(home, "state"), "TMPDIR="+filepath.Join(home, "tmp"), "TERM=xterm-256color"),
	}
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.tmux("kill-server") })
	return d
}

// jonggrangRows picks each row's name and the cell after it (its status, or its stage where the table is
// narrow) out of the runs pane. Only the simulator changes them in the first seconds, so a change is the
// simulator's.
var jonggrangRows = regexp.MustCompile(`(?m)^[┃│][▶‖?⚠✗⊘✓·⌂] (\S+)\s+(\S+)`)

func jonggrangProgress(screen string) string {
	var rows []string
	for _, m := range jonggrangRows.FindAllStringSubmatch(screen, -1) {
		rows = append(rows, m[1]+" "+m[2])
	}
	return strings.Join(rows, "; ")
}

// TestDemoInTmux is issue 7's "done means": the demo in a real terminal, the simulator visibly changing a
// run, the paused run stepped forward after ticking its last item, the dead process's lock cleared, and the
// files on disk changed accordingly; without --dir, the workspace is gone afterwards.
func TestDemoInTmux(t *testing.T) {
	t.Parallel()
	d := newTmuxDemo(t)
	bin := buildRunwatch(t)
	dir := filepath.Join(t.TempDir(), "ws")
	exitFile := d.start(t, fmt.Sprintf("%s demo --dir %s --speed 8", bin, dir))

	// A change made by the simulator: a jonggrang run's progress moves on screen.
	first := jonggrangProgress(d.waitScreen("the jonggrang runs", func(s string) bool { return jonggrangRows.MatchString(s) }))
	d.waitScreen("the simulator to advance a jonggrang run", func(s string) bool {
		now := jonggrangProgress(s)
		return now != "" && now != first
	})

	pausedState := only(t, filepath.Join(dir, "reports", "sphinx-traceability-migration-*", "state.env"))
	pausedDir := filepath.Dir(pausedState)
	deadLock := only(t, filepath.Join(dir, "reports", "iso26262-mining-*", "lock", "active.lock"))
	const item = "CB_M2_NO_LEGACY_TOKENS"

	// Stepping the paused run is refused while an item of its stage is open.
	d.selectRun("sphinx")
	d.press(keys.ActStep)
	d.waitText("refused")
	if s := d.screen(); !strings.Contains(s, item) {
		t.Errorf("the refusal does not name the open item %s:\n%s", item, s)
	}

	// Tick the item: walk the detail cursor down from the current stage, asking to tick at each row, until
	// the confirmation names our item (other rows are declined or refused). This relies on what the
	// dashboard says, not on how it styles the selected row.
	d.focus("Detail")
	want := "tick " + item // the summary line; the diff's context lines name neighbours without "tick "
	for i := 0; ; i++ {
		if i > 30 {
			t.Fatalf("never reached %s in the detail pane:\n%s", item, d.screen())
		}
		d.press(keys.ActDown)
		time.Sleep(100 * time.Millisecond)
		d.press(keys.ActTick)
		if !d.within(3*time.Second, func(s string) bool { return strings.Contains(s, "[y/N]") }) {
			continue // not a checklist row
		}
		if strings.Contains(d.screen(), want) {
			break
		}
		d.send("n")
		d.waitScreen("the dialog to close", func(s string) bool { return !strings.Contains(s, "[y/N]") })
	}
	checklist := filepath.Join(pausedDir, "checklist.state.env")
	d.confirm("tick "+item, func() bool { return envValue(checklist, item) == "1" })
	// The step is planned from the run as the dashboard last read it: wait until it has read the tick.
	d.waitText("[x] " + item)
	// The tick held the run lock for a moment; a step pressed before the dashboard has seen it go is
	// rightly refused ("a live lock holds ..."). Press again once the dashboard has caught up.
	for i := 0; ; i++ {
		d.press(keys.ActStep)
		if d.within(5*time.Second, func(s string) bool { return strings.Contains(s, "[y/N]") }) {
			break
		}
		if i == 10 || !strings.Contains(d.screen(), "live lock") {
			t.Fatalf("step after the tick not offered:\n%s", d.screen())
		}
		time.Sleep(300 * time.Millisecond)
	}
	d.confirm("step M2", func() bool { return envValue(pausedState, "M2_DONE") == "1" })

	// Clear the lock left by the dead process.
	d.selectRun("mining")
	d.press(keys.ActUnlock)
	d.waitText("is not running on")
	d.confirm("clear the dead lock", func() bool { _, err := os.Stat(deadLock); return os.IsNotExist(err) })

	d.press(keys.ActQuit)
	d.waitExit(exitFile)

	// On disk: the step and the tick, in the convention's style; the lock gone and its clearing logged.
	st := readEnvForTest(t, pausedState)
	for k, want := range map[string]string{"M2_DONE": "1", "M2_CHECKLIST_DONE": "1", "CURRENT_STAGE": "M3", "LAST_COMPLETED_STAGE": "M2"} {
		if st[k] != want {
			t.Errorf("state.env %s=%q, want %q", k, st[k], want)
		}
	}
	if cl := readEnvForTest(t, filepath.Join(pausedDir, "checklist.state.env")); cl[item] != "1" {
		t.Errorf("checklist %s=%q, want 1", item, cl[item])
	}
	log, _ := os.ReadFile(filepath.Join(pausedDir, "run.log"))
	if !bytes.Contains(log, []byte("stage_complete stage=M2")) {
		t.Errorf("run.log of the stepped run has no stage_complete line:\n%s", log)
	}
	if _, err := os.Stat(deadLock); !os.IsNotExist(err) {
		t.Errorf("dead process's lock %s still there (%v)", deadLock, err)
	}
	mlog, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(deadLock)), "run.log"))
	if !bytes.Contains(mlog, []byte("] stale_lock_cleared payload=")) {
		t.Errorf("mining run.log does not record the cleared lock")
	}

	// The simulator's own changes: a feature of the web app (other than the finished bugfix) got past the
	// three phases the workspace started the advancing one with; and no lock of the exited demo process is
	// left claiming to be live.
	locs, err := state.Discover([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	env := state.NewEnv(0)
	advanced := false
	for _, loc := range locs {
		run := state.Load(loc, env)
		if run.Kind == model.KindJonggrang && strings.HasPrefix(loc.Dir, filepath.Join(dir, "webapp")) && !strings.HasPrefix(run.ID, "fix-typo") {
			advanced = advanced || run.Progress.Done > 3
		}
		for _, l := range run.Locks {
			if l.Verdict == model.VerdictLive {
				t.Errorf("%s: lock %s still judged live after the demo exited: %v", run.ID, l.Path, l.Reasons)
			}
		}
	}
	if !advanced {
		t.Error("no web app feature advanced past phase 3 on disk")
	}
}

// TestDemoInTmuxRemovesTempWorkspace runs the demo without --dir and checks nothing is left in TMPDIR.
func TestDemoInTmuxRemovesTempWorkspace(t *testing.T) {
	t.Parallel()
	d := newTmuxDemo(t)
	bin := buildRunwatch(t)
	tmp := ""
	for _, e := range d.env {
		if v, ok := strings.CutPrefix(e, "TMPDIR="); ok {
			tmp = v
		}
	}
	exitFile := d.start(t, bin+" demo --speed 8")
	d.waitScreen("the dashboard on the demo workspace", func(s string) bool { return jonggrangRows.MatchString(s) })
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "runwatch-demo-") {
		t.Fatalf("TMPDIR holds %v while the demo runs, want one runwatch-demo-* folder", entries)
	}
	d.press(keys.ActQuit)
	d.waitExit(exitFile)
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("TMPDIR still holds %v after the demo exited", entries)
	}
}

func only(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("%s matched %v (%v), want exactly one", pattern, m, err)
	}
	return m[0]
}

// readEnvForTest reads a state.env written in the convention's style and checks that style on the way:
// every line KEY="value", keys sorted.
func readEnvForTest(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string]string{}
	prev := ""
	line := regexp.MustCompile(`^([A-Z][A-Z0-9_]*)="((?:[^"\\]|\\.)*)"$`)
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("%s: line %q is not KEY=\"value\"", path, l)
			continue
		}
		if m[1] < prev {
			t.Errorf("%s: key %s after %s: not sorted", path, m[1], prev)
		}
		prev = m[1]
		kv[m[1]] = m[2]
	}
	return kv
}

// withoutTmux drops the variables of a tmux the test may itself run in, so the private server is on its own.
func withoutTmux(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "TMUX=") && !strings.HasPrefix(e, "TMUX_PANE=") {
			out = append(out, e)
		}
	}
	return out
}

// The simulator starts a new feature whenever one completes, so the number of runs grows during the tour.
var (
	sphinxFiltered = regexp.MustCompile(`Runs 1 of \d+ /sphinx`)
	allRuns        = regexp.MustCompile(`Runs \d+ [━─]`)
)

// TestReadmeTourInTmux walks the README's tour as written, key for key, at 120x40 on the real binary, and
// checks on disk what each step says it changes.
func TestReadmeTourInTmux(t *testing.T) {
	t.Parallel()
	d := newTmuxDemo(t)
	bin := buildRunwatch(t)
	dir := filepath.Join(t.TempDir(), "ws")
	exitFile := d.start(t, fmt.Sprintf("%s demo --dir %s", bin, dir))
	const item = "CB_M2_NO_LEGACY_TOKENS"

	// 1. The header counts who needs you; Detail's first line says why and which key.
	d.waitText("need you")
	d.waitText("Needs you: ")
	d.waitText("▶ add-login-form")
	pausedState := only(t, filepath.Join(dir, "reports", "sphinx-traceability-migration-*", "state.env"))
	checklist := filepath.Join(filepath.Dir(pausedState), "checklist.state.env")
	deadLock := only(t, filepath.Join(dir, "reports", "iso26262-mining-*", "lock", "active.lock"))

	// 2. / sphinx enter; S refused naming the item; tab, j j, space, y; S, y.
	d.send("/")
	d.typeText("sphinx")
	d.send("enter")
	d.waitScreen("the filtered list", sphinxFiltered.MatchString)
	d.send("S")
	d.waitScreen("the refusal naming "+item, func(s string) bool { return strings.Contains(s, "refused") && strings.Contains(s, item) })
	d.send("tab")
	d.waitText("focus Detail")
	d.send("j")
	d.send("j")
	d.send("space")
	d.waitText("tick " + item)
	d.confirm("tick", func() bool { return envValue(checklist, item) == "1" })
	d.waitText("[x] " + item)
	d.send("S")
	d.waitText("[y/N]")
	d.send("y")
	d.waitScreen("M2 done on disk", func(string) bool { return envValue(pausedState, "M2_DONE") == "1" })
	d.waitText("◀ current") // the stepped run re-read

	// 3. / mining enter: the dead pid's lock, U, y.
	d.send("/")
	d.typeText("mining")
	d.send("enter")
	d.waitText("Needs you: lock held by dead pid")
	d.waitText("press U")
	d.send("U")
	d.confirm("clear the dead lock", func() bool { _, err := os.Stat(deadLock); return os.IsNotExist(err) })

	// 4. / billing enter: waiting for your answer; b brief, y copies, esc closes.
	d.send("/")
	d.typeText("billing")
	d.send("enter")
	d.waitText("waiting for your answer")
	d.send("b")
	d.waitText("Resume brief")
	d.send("y")
	d.send("esc")
	d.waitScreen("the brief to close", func(s string) bool { return !strings.Contains(s, "Resume brief") })

	// 5. / sphinx enter, Z, y: the step is undone on that run.
	d.send("/")
	d.typeText("sphinx")
	d.send("enter")
	d.waitScreen("the filtered list", sphinxFiltered.MatchString)
	d.send("Z")
	d.waitText("[y/N]")
	d.send("y")
	d.waitScreen("the step undone on disk", func(string) bool { return envValue(pausedState, "M2_DONE") != "1" })

	// 6. / docs enter: the docs fix's phases with their usual lengths; with no file changing it turns
	// orphaned once the demo's grace is over, and Detail names the key.
	d.send("/")
	d.typeText("docs")
	d.send("enter")
	d.waitText("usually ")
	d.waitText("Needs you: phase 4 skill-discovery is marked running but nothing has run it for")
	d.waitText("press X")

	// 7. esc clears the filter; ? shows keys and legend; q closes the help, then quits.
	d.send("esc")
	time.Sleep(500 * time.Millisecond) // a lone ESC followed at once by a key reads as alt+key
	d.waitScreen("the whole list", func(s string) bool { return allRuns.MatchString(s) })
	d.send("?")
	d.waitText("Help · ")
	d.send("G") // the legend follows the keys; on a short screen it is below them
	d.waitText("Legend")
	d.send("q") // as in less: q closes what is open, and quits only from the panes
	d.waitText("focus Runs")
	d.send("q")
	d.waitExit(exitFile)

	// The demo's journal is in its workspace, not in the person's state folder.
	if _, err := os.Stat(journal.PathIn(demoStateHome(dir))); err != nil {
		t.Errorf("the demo's journal is not in its workspace: %v", err)
	}
	for _, e := range d.env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			if _, err := os.Stat(filepath.Join(v, "runwatch", "journal.jsonl")); err == nil {
				t.Error("the demo wrote into the real journal")
			}
		}
	}
}
