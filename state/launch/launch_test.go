package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/shellword"
	"runwatch/state/brief"
)

// TestMain lets the test binary be runwatch's InDirCommand, which the tmux windows it opens run (LaunchInTmux
// runs os.Executable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == InDirCommand {
		os.Exit(ExecInDir(os.Args[2:], os.Stdin, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`claude --resume {{.ID}}`, []string{"claude", "--resume", "{{.ID}}"}},
		{`  a   b  `, []string{"a", "b"}},
		{`'single $x "y"' "double \"q\" \$HOME \x" back\ slash`, []string{`single $x "y"`, `double "q" $HOME \x`, "back slash"}},
		{`"resume {{.ID}} now"`, []string{"resume {{.ID}} now"}},
		{`{{printf "%s %s" .ID .Dir}}`, []string{`{{printf "%s %s" .ID .Dir}}`}},
		{`x"{{ index .Keys "RUN ID" }}"y`, []string{`x{{ index .Keys "RUN ID" }}y`}},
		{`'' ""`, []string{"", ""}},
		{"a\\\nb", []string{"ab"}},
	}
	for _, c := range cases {
		words, err := splitWords(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		var got []string
		for _, w := range words {
			got = append(got, w.text)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{`a 'open`, `"open`, `{{.ID`} {
		if _, err := splitWords(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
		if err := Check("resume_command", bad); err == nil {
			t.Errorf("Check(%q): no error", bad)
		}
	}
	if err := Check("resume_command", `claude {{.NoSuchFunc | nofunc}}`); err == nil || !strings.Contains(err.Error(), "resume_command") {
		t.Errorf("Check of an undefined function: %v", err)
	}
	// A misspelt field parses; it is found by rendering over a sample run.
	if err := Check("resume_command.resumable", `opencode {{.RepoRot}}`); err == nil || !strings.Contains(err.Error(), "RepoRot") {
		t.Errorf("Check of a misspelt field: %v", err)
	}
	for _, good := range []string{`claude {{.Brief}}`, `sh -c "cd \"$1\" && exec opencode" sh {{.RepoRoot}}`, `x {{index .Keys "RUN_ID"}} {{.CurrentStageName}}`} {
		if err := Check("resume_command", good); err != nil {
			t.Errorf("Check(%q): %v", good, err)
		}
	}
}

// hostileRun has values that would run commands if they ever reached a shell.
func hostileRun(t *testing.T) model.Run {
	project := t.TempDir()
	return model.Run{
		ID: "add-login$(touch pwned);x", Kind: model.KindJonggrang, Title: "it's \"quoted\" `and` ; rm -rf ~",
		Dir: filepath.Join(project, ".jonggrang", ".output", "features", "add-login"), ProjectRoot: project,
		StatePath: filepath.Join(project, "MANIFEST.yaml"), Status: model.StatusPaused, CurrentStage: "6",
		Stages: []model.Stage{model.Stage{Key: "6", Name: "brainstorming", Status: model.StageFailed}.WithRare(model.StageRare{Error: "Awaiting human input (brainstorming)"})},
	}
}

func testEnv() model.Env {
	return model.Env{Now: time.Date(2026, 2, 16, 5, 31, 2, 0, time.UTC), Host: "testhost"}
}

func TestRenderKeepsEachValueOneArgument(t *testing.T) {
	run := hostileRun(t)
	argv, err := Render(`agent --id {{.ID}} "title: {{.Title}}" --phase={{.CurrentStage}}:{{.CurrentStageName}} {{.Nothing}}`,
		NewData(run, testEnv()))
	if err == nil {
		t.Fatalf("an unknown field must be an error, got %q", argv)
	}
	argv, err = Render(`agent --id {{.ID}} "title: {{.Title}}" --phase={{.CurrentStage}}:{{.CurrentStageName}} {{.LogPath}} ""`,
		NewData(run, testEnv()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agent", "--id", run.ID, "title: " + run.Title, "--phase=6:brainstorming", ""}
	if !reflect.DeepEqual(argv, want) {
		t.Fatalf("got %q\nwant %q", argv, want)
	}
}

func TestPrepareWithoutTemplate(t *testing.T) {
	_, err := Prepare(map[string]string{"resumable": "x"}, hostileRun(t), testEnv(), "")
	if !errors.Is(err, ErrNoTemplate) || !strings.Contains(err.Error(), "jonggrang") {
		t.Fatalf("got %v, want ErrNoTemplate naming the convention", err)
	}
	if !strings.Contains(HowToConfigure, "resume_command:") {
		t.Fatal("the help must show the config key")
	}
}

// recorder writes a script that records its arguments (NUL-separated) and working directory, then renames
// the record into place so a reader never sees half of it.
func recorder(t *testing.T) (script, record, cwd string) {
	dir := t.TempDir()
	script, record, cwd = filepath.Join(dir, "record-args.sh"), filepath.Join(dir, "args"), filepath.Join(dir, "cwd")
	body := "#!/bin/sh\n" +
		"for a in \"$@\"; do printf '%s\\0' \"$a\"; done > '" + record + ".tmp'\n" +
		"pwd > '" + cwd + "'\n" +
		"mv '" + record + ".tmp' '" + record + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, record, cwd
}

func readRecord(t *testing.T, record string) []string {
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// awkwardArgs are arguments tmux and shells treat specially.
var awkwardArgs = `';' 'end;' 'esc\;' '{' '}' -x '#{session_name}' '$(touch pwned)'`

func expectedArgs(run model.Run) []string {
	return []string{run.ID, "title: " + run.Title, brief.Build(run, testEnv()).Markdown(),
		";", "end;", `esc\;`, "{", "}", "-x", "#{session_name}", "$(touch pwned)"}
}

// TestLaunchForeground runs the configured command the way the dashboard key does outside tmux: Prepare, then
// the *exec.Cmd that tea.ExecProcess runs (here with explicit stdio).
func TestLaunchForeground(t *testing.T) {
	t.Parallel()
	script, record, cwd := recorder(t)
	run := hostileRun(t)
	c, err := Prepare(map[string]string{"jonggrang": script + ` {{.ID}} "title: {{.Title}}" {{.Brief}} ` + awkwardArgs},
		run, testEnv(), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.InTmux {
		t.Fatal("TMUX is empty, so the command must run in the foreground")
	}
	if fg := c.ForegroundCmd(); fg.Stdin != nil || fg.Stdout != nil || fg.Stderr != nil || fg.Dir != run.ProjectRoot {
		t.Fatalf("ForegroundCmd must leave stdio to Bubble Tea and start in the project: %+v", fg)
	}
	var stdout, stderr bytes.Buffer
	if err := c.RunForeground(strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("%v (stderr %s)", err, stderr.String())
	}
	if got, want := readRecord(t, record), expectedArgs(run); !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded arguments\n%q\nwant\n%q", got, want)
	}
	if got, _ := os.ReadFile(cwd); strings.TrimSpace(string(got)) != run.ProjectRoot {
		t.Fatalf("ran in %q, want %q", got, run.ProjectRoot)
	}
	if _, err := os.Stat(filepath.Join(run.ProjectRoot, "pwned")); err == nil {
		t.Fatal("a value reached a shell")
	}
	if s := c.String(); !strings.HasPrefix(s, script+" 'add-login$(touch pwned);x' ") {
		t.Fatalf("the confirmation must show the exact command, shell-quoted: %s", s)
	}

	failing, err := Prepare(map[string]string{"jonggrang": "false"}, run, testEnv(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := failing.RunForeground(nil, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "false") {
		t.Fatalf("a failing command must report itself: %v", err)
	}
}

// waitForFile waits for a tmux window's command, which runs on its own, to leave its record. The context is a
// deadline against hanging, not a timing assertion.
func waitForFile(ctx context.Context, t *testing.T, path, failure string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal(failure)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestLaunchInTmux opens the command in a new window of a private tmux server, as the dashboard key does
// inside tmux.
func TestLaunchInTmux(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	// the server's folder and home, where a `#(touch PWN)` that tmux expanded would leave its file
	serverDir, home := t.TempDir(), t.TempDir()
	tmux := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Dir, cmd.Env = serverDir, append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tmux("new-session", "-d", "-s", "runwatch-test", "-x", "80", "-y", "20")
	tmux("set-option", "-g", "remain-on-exit", "on") // the pane stays to be asked about once its command ends
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	pid := tmux("display-message", "-p", "-t", "runwatch-test", "#{pid}")
	session := tmux("display-message", "-p", "-t", "runwatch-test", "#{session_id}")
	inTmux := sock + "," + pid + "," + strings.TrimPrefix(session, "$") // $TMUX in a pane of that session

	script, record, cwd := recorder(t)
	run := hostileRun(t)
	c, err := Prepare(map[string]string{"jonggrang": script + ` {{.ID}} "title: {{.Title}}" {{.Brief}} ` + awkwardArgs},
		run, testEnv(), inTmux)
	if err != nil {
		t.Fatal(err)
	}
	if !c.InTmux {
		t.Fatal("TMUX is set, so the command must open in a tmux window")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	launched, err := c.LaunchInTmux(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitForFile(ctx, t, record, "the tmux window never ran the command")
	// The launch says the pane it opened, as tmux lists it: what goto finds the agent by.
	if got := tmux("display-message", "-p", "-t", launched.PaneID, "#{pane_id} #{pane_pid} #{window_name}"); got !=
		fmt.Sprintf("%s %d %s", launched.PaneID, launched.PanePID, c.WindowName) || launched.Socket != sock || launched.StatePath != run.StatePath {
		t.Fatalf("launch says %+v; tmux says %q", launched, got)
	}
	if got, want := readRecord(t, record), expectedArgs(run); !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded arguments\n%q\nwant\n%q", got, want)
	}
	if got, _ := os.ReadFile(cwd); strings.TrimSpace(string(got)) != run.ProjectRoot {
		t.Fatalf("ran in %q, want %q", got, run.ProjectRoot)
	}

	// A one-word command goes through tmux's sh -c, quoted so it stays one program name.
	one, err := Prepare(map[string]string{"jonggrang": script}, run, testEnv(), inTmux)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	if _, err := one.LaunchInTmux(ctx); err != nil {
		t.Fatal(err)
	}
	waitForFile(ctx, t, record, "the one-word command never ran")

	// A work folder whose name is a tmux format (a command, a variable, strftime, a final ';') is where the
	// command starts, and nothing in it runs.
	hostile := run
	hostile.ProjectRoot = filepath.Join(t.TempDir(), "p-#(touch PWN)-#{session_name}-%H-##-%%;")
	if err := os.Mkdir(hostile.ProjectRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	if c, err = Prepare(map[string]string{"jonggrang": script + " {{.WorkDir}}"}, hostile, testEnv(), inTmux); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LaunchInTmux(ctx); err != nil {
		t.Fatal(err)
	}
	waitForFile(ctx, t, record, "the command in the hostile folder never ran")
	if got := readRecord(t, record); !reflect.DeepEqual(got, []string{hostile.ProjectRoot}) {
		t.Errorf("recorded %q, want the folder's name literally", got)
	}
	if got, _ := os.ReadFile(cwd); strings.TrimSpace(string(got)) != hostile.ProjectRoot {
		t.Errorf("ran in %q, want %q", got, hostile.ProjectRoot)
	}
	// a #() job runs in the folder of the tmux client that passed it: this test's
	here, _ := os.Getwd()
	for _, d := range []string{here, serverDir, home, filepath.Dir(hostile.ProjectRoot), hostile.ProjectRoot} {
		if _, err := os.Stat(filepath.Join(d, "PWN")); err == nil {
			t.Errorf("tmux ran the command in the folder's name: %s/PWN exists", d)
		}
	}

	c.tmux = filepath.Join(t.TempDir(), "no-server") + ",1,0"
	if _, err := c.LaunchInTmux(ctx); err == nil || !strings.Contains(err.Error(), "tmux") {
		t.Fatalf("no tmux server: got %v, want an error naming tmux", err)
	}
}

// FuzzSplitWords checks that splitting never panics, and that quoting the words back (as the confirmation
// shows them) and splitting again gives the same words.
func FuzzSplitWords(f *testing.F) {
	f.Add(`claude --resume {{.ID}} "title: {{.Title}}" 'a b' c\ d`)
	f.Add(`"unterminated`)
	f.Add(`{{ printf "%s" "}}" }}`)
	f.Fuzz(func(t *testing.T, tmpl string) {
		words, err := splitWords(tmpl)
		if err != nil {
			return
		}
		var quoted []string
		for _, w := range words {
			if strings.Contains(w.text, "{{") {
				return
			}
			quoted = append(quoted, shellword.Quote(w.text))
		}
		again, err := splitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-split of %q: %v", quoted, err)
		}
		if len(again) != len(words) {
			t.Fatalf("%q → %q → %+v", tmpl, quoted, again)
		}
		for i := range words {
			if again[i].text != words[i].text {
				t.Fatalf("%q → %q → %+v", tmpl, quoted, again)
			}
		}
	})
}

// TestHowToConfigureExamplesWork renders the examples the help text gives, so the help cannot rot.
func TestHowToConfigureExamplesWork(t *testing.T) {
	run := hostileRun(t)
	run.Kind = model.KindResumable
	run.Resumable = &model.ResumableDetail{Keys: model.PackKVs([]model.KV{{Key: "REPO_ROOT", Value: "/src/repo"}})}
	argv, err := Render(`sh -c "cd \"\$1\" && exec opencode" sh {{.RepoRoot}}`, NewData(run, testEnv()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sh", "-c", `cd "$1" && exec opencode`, "sh", "/src/repo"}
	if !reflect.DeepEqual(argv, want) {
		t.Fatalf("got %q, want %q", argv, want)
	}
	if !strings.Contains(HowToConfigure, `'sh -c "cd \"\$1\" && exec opencode" sh {{.RepoRoot}}'`) ||
		!strings.Contains(HowToConfigure, `'claude {{.Brief}}'`) {
		t.Fatal("the help text no longer shows the tested examples")
	}
}

// ExecInDir, when it cannot start the command, says why with the folder and command quoted (they are run
// text) and waits for Enter instead of closing the window at once.
func TestExecInDirNamesWhatFailed(t *testing.T) {
	var stderr bytes.Buffer
	missing := filepath.Join(t.TempDir(), "gone\x1b]0;title\a")
	if code := ExecInDir([]string{missing, "--", "true"}, strings.NewReader("\n"), &stderr); code != 1 ||
		!strings.Contains(stderr.String(), `gone\x1b]0;title\a`) || !strings.Contains(stderr.String(), "press Enter") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if code := ExecInDir([]string{"only-a-dir"}, strings.NewReader(""), &stderr); code != 2 {
		t.Errorf("a malformed call: exit %d", code)
	}
}
