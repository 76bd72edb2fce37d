package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/state/resumable/resumabletest"
)

// Names a run folder, a phase and a lock file can have, each of which runs `touch PWN` (or expands a glob)
// if a shell reads it unquoted. Each starts with its own tag, so typing the tag and TAB completes one name.
var hostileRunNames = []string{
	"h1-$(touch${IFS}PWN)",
	"h2;touch PWN;",
	"h3-`touch PWN`",
	"h4-*?[ab]", // matches the bait file h4-x1a in the shell's folder if it is left unquoted
	`h5 a'b"c`,
	"h6 x1", "h6 x2", // share a prefix with a space: the shell inserts it quoted, and TAB goes on from there
	// a line-based answer splits it into "h8 a", a run that is not there, and "h0-victim", another's id
	hostileNewlineName,
	// read up to its first TAB it is "hb-victim": runwatch would be given another name (another run's id)
	hostileTabName,
}

const (
	hostileNewlineName = "h8 a\nh0-victim"
	hostileTabName     = "hb-victim\ttail"
)

const (
	hostilePhase = "h9-$(touch${IFS}PWN)"
	hostileLock  = "h7-$(touch${IFS}PWN);`touch PWN`.lock"
)

// completionCase is what is typed, TAB by TAB, then Enter, and the arguments runwatch must receive.
type completionCase struct {
	typed []string // text typed before each TAB
	want  []string
	// notIn is a shell the case cannot hold for: fish has no way to offer a candidate with a TAB in it
	// (it splits there), so runwatch leaves such a name out for it (TestCompletionNeverCutsAtATab).
	notIn string
}

func hostileCompletionCases() []completionCase {
	var cases []completionCase
	for _, n := range hostileRunNames[:5] {
		cases = append(cases, completionCase{typed: []string{"runwatch brief " + n[:2]}, want: []string{"brief", n}})
	}
	return append(cases,
		completionCase{typed: []string{"runwatch brief h6", "2"}, want: []string{"brief", "h6 x2"}},
		completionCase{typed: []string{"runwatch brief h8"}, want: []string{"brief", hostileNewlineName}},
		completionCase{typed: []string{"runwatch brief hb"}, want: []string{"brief", hostileTabName}, notIn: "fish"},
		completionCase{typed: []string{"runwatch retry hfeat h9"}, want: []string{"retry", "hfeat", hostilePhase}},
		completionCase{typed: []string{"runwatch unlock hfeat h7"}, want: []string{"unlock", "hfeat", hostileLock}},
	)
}

// hostileCompletionWorkspace makes runs under the hostile names (resumable copies), a jonggrang feature
// "hfeat" with a failed phase and a stale lock under hostile names, and a config whose roots hold them.
func hostileCompletionWorkspace(t *testing.T) (configHome string) {
	t.Helper()
	runs := filepath.Join(t.TempDir(), "runs")
	src := filepath.Join("..", "testdata", "resumable-c1", "reports", "iso26262-mining-20260301T101500Z")
	for _, n := range hostileRunNames {
		resumabletest.CopyDir(t, src, filepath.Join(runs, n))
	}
	jroot := filepath.Join(t.TempDir(), "app")
	feature := filepath.Join(jroot, ".jonggrang", ".output", "features", "hfeat")
	locks := filepath.Join(jroot, ".jonggrang", "locks")
	for _, d := range []string{feature, locks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	manifest := fmt.Sprintf("feature_id: hfeat\nstatus: failed\ncurrent_phase: '%s'\nphases:\n  '1':\n    name: setup\n"+
		"    status: completed\n  '%s':\n    name: build\n    status: failed\n", hostilePhase, hostilePhase)
	lock := fmt.Sprintf(`{"agent_id":"a","pid":%d,"acquired_at":"2026-02-16T03:00:00.000Z"}`, resumabletest.DeadPID(t))
	for path, data := range map[string]string{filepath.Join(feature, "MANIFEST.yaml"): manifest, filepath.Join(locks, hostileLock): lock} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	configHome = t.TempDir()
	if err := os.MkdirAll(filepath.Join(configHome, "runwatch"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("roots: [%q, %q]\n", runs, jroot)
	if err := os.WriteFile(filepath.Join(configHome, "runwatch", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return configHome
}

// shellPane is an interactive shell in a tmux pane on a private server, with runwatch's completion loaded.
type shellPane struct {
	t      *testing.T
	socket string
	env    []string
}

func (p *shellPane) tmux(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// line is the text of the line the cursor is on, up to the cursor (so a space TAB added counts).
func (p *shellPane) line() string {
	var x, y int
	fmt.Sscan(p.tmux("display-message", "-p", "-t", "sh", "#{cursor_x} #{cursor_y}"), &x, &y)
	l := []rune(strings.TrimRight(p.tmux("capture-pane", "-p", "-N", "-t", "sh", "-S", fmt.Sprint(y), "-E", fmt.Sprint(y)), "\n"))
	for len(l) < x {
		l = append(l, ' ')
	}
	return string(l[:x])
}

// waitLine polls until the cursor's line satisfies cond. The deadline only bounds a broken run.
func (p *shellPane) waitLine(what string, cond func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if l := p.line(); cond(l) {
			return l
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("gave up waiting for %s; screen:\n%s", what, p.tmux("capture-pane", "-p", "-t", "sh"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCompletionQuotesHostileNamesInRealShells types into real bash, zsh and fish (interactive, in tmux):
// the start of a hostile run id, phase or lock name, TAB (again where the names share a quoted prefix),
// Enter. runwatch must receive the literal name and nothing may run: no PWN file, no glob expanded.
func TestCompletionQuotesHostileNamesInRealShells(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("types into three interactive shells in tmux: not under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	configHome := hostileCompletionWorkspace(t)
	real := runwatchOnPath(t)
	// runwatch on the shells' PATH answers completion as itself and otherwise records the arguments it was
	// given (NUL-separated, renamed into place whole), so the test sees exactly what the shell passed.
	wrap, argv := t.TempDir(), filepath.Join(t.TempDir(), "argv")
	script := fmt.Sprintf("#!/bin/sh\ncase $1 in __complete*|completion) exec %q/runwatch \"$@\";; esac\n"+
		"printf '%%s\\0' \"$@\" > %q.tmp && mv %q.tmp %q\n", real, argv, argv, argv)
	if err := os.WriteFile(filepath.Join(wrap, "runwatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	rc := map[string]string{
		"bash": "PS1='$ '\nsource <(runwatch completion bash)\n",
		"zsh": "PS1='$ '\nautoload -Uz compinit && compinit -u -d " + filepath.Join(home, ".zcompdump") + "\n" +
			"source <(runwatch completion zsh)\n",
		"fish": "function fish_prompt; echo '$ '; end\nfunction fish_greeting; end\nrunwatch completion fish | source\n",
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			sh, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed (.ci/run installs it)", shell)
			}
			dir, cwd := t.TempDir(), t.TempDir()
			// the bait a glob left unquoted would expand to
			if err := os.WriteFile(filepath.Join(cwd, "h4-x1a"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			rcFile := filepath.Join(dir, "rc")
			if err := os.WriteFile(rcFile, []byte(rc[shell]), 0o644); err != nil {
				t.Fatal(err)
			}
			command := map[string]string{
				"bash": sh + " --noprofile --rcfile " + rcFile + " -i",
				"zsh":  "ZDOTDIR=" + dir + " " + sh + " -i",
				"fish": sh + " -i -C 'source " + rcFile + "'",
			}[shell]
			if shell == "zsh" {
				if err := os.Rename(rcFile, filepath.Join(dir, ".zshrc")); err != nil {
					t.Fatal(err)
				}
			}
			p := &shellPane{t: t, socket: filepath.Join(dir, "tmux.sock"), env: append(withoutTmux(os.Environ()),
				"PATH="+wrap+":"+os.Getenv("PATH"), "XDG_CONFIG_HOME="+configHome, "HOME="+home, "TERM=xterm-256color",
				"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"))}
			p.tmux("new-session", "-d", "-x", "200", "-y", "50", "-s", "sh", "-c", cwd, command)
			t.Cleanup(func() {
				// The shell writes its history and (fish) its generated completions under HOME as it exits
				// on the server's SIGHUP: wait for it to be gone, or removing HOME races those writes.
				out, _ := exec.Command("tmux", "-S", p.socket, "display-message", "-p", "-t", "sh", "#{pane_pid}").Output()
				exec.Command("tmux", "-S", p.socket, "kill-server").Run()
				pid := strings.TrimSpace(string(out))
				if pid == "" {
					return
				}
				for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					if _, err := os.Stat("/proc/" + pid); err != nil {
						return
					}
				}
			})
			// checked however the cases end
			defer func() {
				entries, _ := os.ReadDir(cwd)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				if len(names) != 1 {
					t.Errorf("the shell's folder holds %q: a hostile name ran a command", names)
				}
				if _, err := os.Stat(filepath.Join(home, "PWN")); err == nil {
					t.Errorf("a hostile name ran a command in HOME")
				}
			}()
			prompt := func(l string) bool { return l == "$ " }
			p.waitLine("the prompt", prompt)
			for _, c := range hostileCompletionCases() {
				if c.notIn == shell {
					continue
				}
				os.Remove(argv)
				for _, typed := range c.typed {
					p.tmux("send-keys", "-t", "sh", "-l", typed)
					p.waitLine("the typed text", func(l string) bool { return strings.HasSuffix(l, typed) })
					typedLine := p.line()
					p.tmux("send-keys", "-t", "sh", "Tab")
					p.waitLine("the completion of "+typedLine, func(l string) bool { return l != typedLine })
				}
				inserted := p.line()
				p.tmux("send-keys", "-t", "sh", "Enter")
				deadline := time.Now().Add(30 * time.Second)
				for {
					if _, err := os.Stat(argv); err == nil || time.Now().After(deadline) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				data, err := os.ReadFile(argv)
				if err != nil {
					t.Errorf("%q: runwatch was not run after TAB and Enter (line %q); screen:\n%s", c.typed, inserted,
						p.tmux("capture-pane", "-p", "-t", "sh"))
					p.tmux("send-keys", "-t", "sh", "C-c")
				} else if got := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"); fmt.Sprint(got) != fmt.Sprint(c.want) || len(got) != len(c.want) {
					t.Errorf("%q: the line %q gave runwatch %q, want %q", c.typed, inserted, got, c.want)
				}
				p.waitLine("the prompt after "+inserted, prompt)
			}
		})
	}
}

// A run folder name with a TAB is never offered cut at it: bash and zsh offer it whole (TestCompletion-
// QuotesHostileNamesInRealShells), and fish, which splits every candidate at its first TAB, is not offered
// it at all, by the script printed now or by one saved from an earlier version (both ask __complete0).
func TestCompletionNeverCutsAtATab(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed (.ci/run installs it)")
	}
	configHome := hostileCompletionWorkspace(t)
	home := t.TempDir()
	cmd := exec.Command(fish, "--no-config", "-c", "runwatch completion fish | source; complete -C 'runwatch brief hb'")
	cmd.Env = append(os.Environ(), "PATH="+runwatchOnPath(t)+":"+os.Getenv("PATH"), "XDG_CONFIG_HOME="+configHome, "HOME="+home,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "hb-victim") {
		t.Errorf("fish offers %q for a run named %q", out, hostileTabName)
	}
	// The protocol itself: for the scripts that read the first TAB, left out; for zsh's, whole.
	e := testEnv(t, "XDG_CONFIG_HOME", configHome)
	if _, got, _ := runIn(t, e, "__complete0", "brief", "hb"); strings.Contains(got, "hb-victim") {
		t.Errorf("__complete0 offers %q", got)
	}
	if _, got, _ := runIn(t, e, "__complete", "brief", "hb"); strings.Contains(got, "hb-victim") {
		t.Errorf("__complete offers %q", got)
	}
	if _, got, _ := runIn(t, e.with(completeTabsEnv, "1"), "__complete0", "brief", "hb"); got != hostileTabName+"\t\x00" {
		t.Errorf("__complete0 for zsh answers %q, want %q", got, hostileTabName+"\t\x00")
	}
}

// bashUnquote undoes bash's own printf %q, for names with every kind of byte a folder name can hold.
func TestBashUnquoteUndoesPrintfQ(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed (.ci/run installs it)")
	}
	names := append([]string{"plain", "a\nb\tc\x1b[31m\x7f", "ünï 中 \xff\xfe", "~x", "-h", "'\"\\$`!#&|<>(){}[]*?;=:,@%^"}, hostileRunNames...)
	for _, n := range names {
		out, err := exec.Command(bash, "--norc", "-c", `printf '%q' "$1"`, "_", n).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := bashUnquote(string(out)); got != n {
			t.Errorf("bashUnquote(%s) = %q, want %q", out, got, n)
		}
	}
	for typed, want := range map[string]string{`'open quote`: "open quote", `"h5 a'b`: "h5 a'b", `trailing\`: "trailing",
		`"a\"b\x"`: `a"b\x`, `$'a\x41\101\e'`: "aAA\x1b", `$'cut`: "cut", `$(touch PWN)`: "$(touch PWN)"} {
		if got := bashUnquote(typed); got != want {
			t.Errorf("bashUnquote(%s) = %q, want %q", typed, got, want)
		}
	}
}
