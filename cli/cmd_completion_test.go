package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"runwatch/state/resumable/resumabletest"
)

// candidates is what __complete answers for the words, without descriptions.
// candidates is what `runwatch __complete words...` offers in e.
func candidates(t *testing.T, e env, words ...string) []string {
	t.Helper()
	_, out, _ := runIn(t, e, append([]string{"__complete"}, words...)...)
	var got []string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line != "" {
			word, _, _ := strings.Cut(line, "\t")
			got = append(got, word)
		}
	}
	return got
}

func has(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			found = found || l == w
		}
		if !found {
			return false
		}
	}
	return true
}

// completionWorkspace makes a config whose roots hold the fixture runs, so run ids can be completed.
func completionWorkspace(t *testing.T) (configHome string) {
	t.Helper()
	oc := resumabletest.Copy(t)
	configHome = t.TempDir()
	dir := filepath.Join(configHome, "runwatch")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("roots: ["+filepath.Join(oc, "reports")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return configHome
}

func TestCompleteWords(t *testing.T) {
	t.Parallel()
	e := testEnv(t, "XDG_CONFIG_HOME", completionWorkspace(t))
	for _, tc := range []struct {
		words []string
		want  []string // all of these, and nothing that does not start with the last word
	}{
		{[]string{"sta"}, []string{"status"}},
		{[]string{""}, []string{"status", "events", "brief", "unlock", "completion", "version", ":files"}},
		{[]string{"status", "--o"}, []string{"--output"}},
		{[]string{"status", "--output", ""}, []string{"table", "wide", "json", "jsonl"}},
		{[]string{"status", "-o", "j"}, []string{"json", "jsonl"}},
		{[]string{"status", "--output=w"}, []string{"--output=wide"}},
		{[]string{"status", "--sort", "up"}, []string{"updated"}},
		{[]string{"status", ""}, []string{":files"}},
		{[]string{"--read"}, []string{"--read-only"}},
		{[]string{"--config", "x", "stat"}, []string{"status"}},
		{[]string{"step", "iso"}, []string{"iso26262-mining-20260215T143525Z"}},
		{[]string{"brief", "--json", "sph"}, []string{"sphinx-traceability-migration-20260214T184350Z"}},
		{[]string{"events", "--until", "comp"}, []string{"completed"}},
		{[]string{"events", "--run", "irm-id"}, []string{"irm-id-full-backfill-20260215T014733Z"}},
		{[]string{"help", "un"}, []string{"uncheck", "undo", "unlock"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}},
		{[]string{"check", "iso26262-mining", "CB_"}, []string{"CB_VERIFY_COVERAGE_REPORT"}},
		{[]string{"uncheck", "--yes", "iso26262-mining", ""}, []string{"CB_VERIFY_SCHEMA_VALID"}},
		{[]string{"unlock", "iso26262-mining-20260215T143525Z", ""}, []string{"active.lock"}},
	} {
		got := candidates(t, e, tc.words...)
		if !has(got, tc.want...) {
			t.Errorf("complete %q: got %q, want %q among them", tc.words, got, tc.want)
		}
		last := tc.words[len(tc.words)-1]
		for _, g := range got {
			if g != completeFiles && !strings.HasPrefix(g, last) {
				t.Errorf("complete %q: %q does not start with %q", tc.words, g, last)
			}
		}
	}
	if got := candidates(t, e, "check", "iso26262-mining", ""); has(got, "CB_VERIFY_SCHEMA_VALID") {
		t.Errorf("check offers an item already ticked: %q", got)
	}
	if got := candidates(t, e, "step", "iso26262-mining-20260215T143525Z", ""); len(got) != 0 {
		t.Errorf("after RUN, step takes nothing more; got %q", got)
	}
	if got := candidates(t, e, "__com"); has(got, "__complete") {
		t.Errorf("the hidden helper is offered: %q", got)
	}
}

// completionShell builds runwatch into a folder put first on PATH, as the scripts call it by name.
func completionShell(t *testing.T, shell string) (sh string, env []string) {
	t.Helper()
	sh, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed (.ci/run installs it)", shell)
	}
	return sh, append(os.Environ(), "PATH="+runwatchOnPath(t)+":"+os.Getenv("PATH"), "XDG_CONFIG_HOME="+completionWorkspace(t), "HOME="+t.TempDir())
}

// runwatchOnPath returns a folder holding "runwatch": a link to this test binary, which TestMain runs as
// runwatch when called by that name. Cheaper than a build, and it is the code under test.
func runwatchOnPath(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "runwatch")); err != nil {
		t.Fatal(err)
	}
	return bin
}

func shellLines(t *testing.T, env []string, name string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(lines)
	return lines
}

// The bash script, sourced in bash, completes a command prefix, a flag, a flag value and a run id.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	bash, env := completionShell(t, "bash")
	complete := func(line string) []string {
		t.Helper()
		script := `source <(runwatch completion bash) || exit 1
complete -p runwatch >/dev/null || exit 1
read -ra COMP_WORDS <<< "$LINE"
[[ $LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_runwatch
printf '%s\n' "${COMPREPLY[@]}"`
		return shellLines(t, append(env, "LINE="+line), bash, "--norc", "-c", script)
	}
	for line, want := range map[string][]string{
		"runwatch sta":                 {"status"},
		"runwatch status --so":         {"--sort"},
		"runwatch status -o js":        {"json", "jsonl"},
		"runwatch unlock iso":          {"iso26262-mining-20260215T143525Z"},
		"runwatch completion ":         {"bash", "fish", "zsh"},
		"runwatch events --until paus": {"paused"},
	} {
		if got := complete(line); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("bash %q: %q, want %q", line, got, want)
		}
	}
}

// The zsh script, sourced after compinit, hands the candidates to compadd (recorded here, since compadd
// only works inside a completion widget).
func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	zsh, env := completionShell(t, "zsh")
	script := `autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump" || exit 1
source <(runwatch completion zsh) || exit 1
[[ $_comps[runwatch] == _runwatch ]] || { echo "not registered"; exit 1; }
compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
_files() { print -- FILES; }
words=(${=LINE})
[[ $LINE == *" " ]] && words+=("")
CURRENT=${#words}
_runwatch`
	for line, want := range map[string][]string{
		"runwatch sta":          {"FILES", "status"}, // the first word may also be a PATH
		"runwatch status --out": {"--output"},
		"runwatch brief sph":    {"sphinx-traceability-migration-20260214T184350Z"},
		"runwatch status ":      {"FILES"},
	} {
		if got := shellLines(t, append(env, "LINE="+line), zsh, "-f", "-c", script); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("zsh %q: %q, want %q", line, got, want)
		}
	}
}

// The fish script, sourced in fish, completes through fish's own engine (complete -C), descriptions and all.
func TestCompletionFish(t *testing.T) {
	t.Parallel()
	fish, env := completionShell(t, "fish")
	for line, want := range map[string][]string{
		"runwatch sta":                {"status\tprint every run once, those that need you first: a table, or the stable JSON document"},
		"runwatch status --sort att":  {"attention"},
		"runwatch check iso":          {"iso26262-mining-20260215T143525Z"},
		"runwatch events --until awa": {"awaiting-input"},
	} {
		got := shellLines(t, env, fish, "--no-config", "-c", "runwatch completion fish | source; complete -C '"+line+"'")
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("fish %q: %q, want %q", line, got, want)
		}
	}
}

// A name with a newline is one candidate in __complete0 (what the zsh and fish scripts ask) and none in
// __complete (what scripts saved by earlier versions ask, one a line): never two candidates, the second
// another run's id.
func TestANewlineInARunNameIsNeverTwoCandidates(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_CONFIG_HOME=" + hostileCompletionWorkspace(t), "XDG_STATE_HOME=" + t.TempDir()}
	code, out, stderr := runBinary(t, env, "__complete0", "brief", "h")
	if code != 0 {
		t.Fatalf("__complete0: exit %d: %s", code, stderr)
	}
	got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	if !slices.Contains(got, hostileNewlineName) || slices.Contains(got, "h0-victim") || slices.Contains(got, "h8 a") {
		t.Errorf("__complete0 brief h: %q, want %q whole among them", got, hostileNewlineName)
	}
	for _, n := range hostileRunNames {
		// A name holding a TAB is left out of __complete0 unless the script reads past it (TestCompletionNeverCutsAtATab).
		if !slices.Contains(got, n) && n != hostileTabName {
			t.Errorf("__complete0 brief h: %q lacks %q", got, n)
		}
	}
	code, out, stderr = runBinary(t, env, "__complete", "brief", "h")
	if code != 0 {
		t.Fatalf("__complete: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if slices.Contains(lines, "h0-victim") || slices.Contains(lines, "h8 a") || !slices.Contains(lines, "h6 x1") {
		t.Errorf("__complete brief h: %q, want the newline name left out and the others there", lines)
	}
}
