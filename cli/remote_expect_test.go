package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/state/action"
	"runwatch/state/resumable/resumabletest"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// changeThenAnswer is a person's answer typed after the run's files changed under the preview they read.
type changeThenAnswer struct {
	change func()
	answer *strings.Reader
}

func (c *changeThenAnswer) Read(p []byte) (int, error) {
	if c.change != nil {
		c.change()
		c.change = nil
	}
	return c.answer.Read(p)
}

// Issue 37.15: a remote action applies exactly what was shown. The host's preview (--dry-run --json) says
// which bytes it starts from, the confirmed command carries them (--expect), and the host refuses, writing
// nothing, when its fresh plan starts from other bytes: on a real sshd, from the dashboard and from the
// command line. Confirmed with nothing changed in between, it is applied.
func TestARemoteActionAppliesOnlyWhatWasShown(t *testing.T) {
	_, e := sshFleet(t, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-shown-20261201T080000Z")
	stateFile, logFile := filepath.Join(dir, "state.env"), filepath.Join(dir, "run.log")
	run := model.Run{Kind: model.KindResumable, ID: "irm-shown-20261201T080000Z", Dir: dir, StatePath: stateFile,
		Remote: &model.RemoteRef{Host: "alpha", Root: "ssh://alpha" + root}}
	// A writer's change the step would still apply over, but not the bytes the person saw.
	const note = "WRITER_NOTE=\"changed after the preview\"\n"
	writerChange := func() {
		b, err := os.ReadFile(stateFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stateFile, append(b, note...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(what string, state []byte, log []byte) {
		t.Helper()
		if now, _ := os.ReadFile(stateFile); !bytes.Equal(now, state) {
			t.Fatalf("%s: state.env written after the refusal:\n%s", what, now)
		}
		if now, _ := os.ReadFile(logFile); !bytes.Equal(now, log) {
			t.Fatalf("%s: an audit line was appended after the refusal:\n%s", what, now)
		}
	}

	// The dashboard: preview, a change on disk, confirm.
	f := fleetActor{ssh: sshFor(e.getenv, config.Config{})}
	p, err := f.Plan(app.ActionRequest{Act: keys.ActStep, Request: action.Request{Verb: action.ActStep, Run: run}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Preview(), `+S1_DONE="1"`) || strings.Contains(p.Preview(), "{") {
		t.Fatalf("the preview is not the host's diff:\n%s", p.Preview())
	}
	writerChange()
	state, log := mustReadFile(t, stateFile), mustReadFile(t, logFile)
	if msg, err := p.Apply(""); err == nil || !strings.Contains(err.Error(), "not what the preview you confirmed started from") ||
		!strings.Contains(err.Error(), "state.env") {
		t.Fatalf("applied over a change made after the preview: %q, %v", msg, err)
	}
	unchanged("dashboard", state, log)

	// The command line: preview, a change on disk while the person reads it, confirm.
	target := "ssh://alpha" + dir
	onTerminal := fakeTerminal(e, "")
	onTerminal.stdin = &changeThenAnswer{change: writerChange, answer: strings.NewReader("y\n")}
	var out, errOut bytes.Buffer
	code := dispatch([]string{"step", target}, &out, &errOut, onTerminal)
	if code != exitNotAsShown || !strings.Contains(errOut.String(), "not what the preview you confirmed started from") {
		t.Fatalf("step confirmed after a change: exit %d, want %d\n%s%s", code, exitNotAsShown, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), `+S1_DONE="1"`) || !strings.Contains(out.String(), "Write this change to state.env and run.log on alpha? [y/N]") {
		t.Errorf("the command line did not show the host's plan before asking what it writes, on alpha:\n%s", out.String())
	}
	unchanged("command line", append(state, note...), log)

	// Nothing changed between preview and confirmation: applied, from both.
	out.Reset()
	errOut.Reset()
	if code := dispatch([]string{"step", target}, &out, &errOut, fakeTerminal(e, "y\n")); code != exitOK {
		t.Fatalf("step: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if after := string(mustReadFile(t, stateFile)); !strings.Contains(after, `S1_DONE="1"`) || !strings.Contains(after, "WRITER_NOTE") {
		t.Fatalf("state.env after the confirmed step:\n%s", after)
	}
	p, err = f.Plan(app.ActionRequest{Act: keys.ActUndo, Request: action.Request{Verb: action.ActUndo, Run: run}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(""); err != nil {
		t.Fatalf("undo from the dashboard: %v", err)
	}
	if after := string(mustReadFile(t, stateFile)); !strings.Contains(after, `S1_DONE="0"`) {
		t.Fatalf("state.env after the undo:\n%s", after)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Issue 37.9: the words after RUN on the command line reach the host's runwatch as words, after `--`, as the
// dashboard's do: `unlock ssh://h/RUN -- --force` names a lock called --force, it does not force anything.
func TestRemoteCommandLineWordsStayWords(t *testing.T) {
	_, e := sshFleet(t, "alpha")
	root := t.TempDir()
	dir := resumabletest.MinimalRun(t, root, "irm-words-20261201T080000Z")
	here, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// A stale lock, which a bare unlock (or one with --force) would clear.
	resumabletest.WriteEnvLock(t, filepath.Join(dir, "run.lock"), resumabletest.DeadPID(t), here, time.Now())
	var out, errOut bytes.Buffer
	code := dispatch([]string{"unlock", "--dry-run", "ssh://alpha" + dir, "--", "--force"}, &out, &errOut, e)
	if code != exitRefused || !strings.Contains(errOut.String(), `has no lock "--force"`) {
		t.Fatalf("unlock -- --force: exit %d, want a refusal naming the lock --force\n%s%s", code, out.String(), errOut.String())
	}
	// The plan as JSON, as the host prints it, with what it starts from.
	out.Reset()
	errOut.Reset()
	code = dispatch([]string{"unlock", "--dry-run", "--json", "ssh://alpha" + dir}, &out, &errOut, e)
	var plan planJSON
	if err := json.Unmarshal(out.Bytes(), &plan); code != exitOK || err != nil || len(plan.Starts) != 1 || !strings.HasSuffix(plan.Starts[0].Path, "run.lock") {
		t.Fatalf("unlock --dry-run --json: exit %d, %v\n%s%s", code, err, out.String(), errOut.String())
	}
}

// A remote confirmation asks what the host's runwatch says the plan writes, on that host, in one line of
// text that cannot act on the terminal; a runwatch there from before it said so is asked about "this change".
func TestRemoteQuestionSaysWhatItWritesOnTheHost(t *testing.T) {
	t.Parallel()
	root, _, err := remote.Parse("ssh://alpha/r")
	if err != nil {
		t.Fatal(err)
	}
	for question, want := range map[string]string{
		"Remove lock/active.lock and append to run.log?": "Remove lock/active.lock and append to run.log on alpha?",
		"":                          "Apply this change on alpha?",
		"Write\x1b[2J to\nx\u202e?": "Write to x<U+202E> on alpha?",
	} {
		if got := (planJSON{Question: question}).questionOn(root); got != want {
			t.Errorf("%q: asked %q, want %q", question, got, want)
		}
	}
}
