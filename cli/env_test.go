package cli

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// testEnv is the environment of a test's commands, given per call (dispatch's env) so that no test changes
// this process's: XDG folders of the test's own (no user config, journal or cache leaks in, and nothing
// leaks out), none of the default roots, ssh command or tmux of whoever runs the tests, and this process's
// environment for the rest; vars (NAME, value, NAME, value …) over it, where "" is unset.
func testEnv(t testing.TB, vars ...string) env {
	t.Helper()
	m := map[string]string{
		"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(),
		"OPENCODE_CONFIG_DIR": "", "RUNWATCH_SSH_COMMAND": "", "TMUX": "", "TMUX_PANE": "", completeTabsEnv: "",
	}
	return env{getenv: lookup(m)}.with(vars...)
}

// with is e with vars (NAME, value …) set over its environment; e itself is unchanged.
func (e env) with(vars ...string) env {
	if len(vars)%2 != 0 {
		panic("env.with: a NAME without its value")
	}
	m := map[string]string{}
	for i := 0; i < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	under := e.getenv
	e.getenv = func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return under(k)
	}
	return e
}

// lookup reads m, and this process's environment for what m does not name.
func lookup(m map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}

// environ is e's environment as a runwatch started as a child is given it (exec.Cmd.Env): this process's,
// with each variable runwatch (and the tmux it starts) reads given e's value.
func (e env) environ() []string {
	names := []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "OPENCODE_CONFIG_DIR",
		"RUNWATCH_SSH_COMMAND", "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "TMPDIR", completeTabsEnv}
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	for _, n := range names {
		out = append(out, n+"="+e.getenv(n))
	}
	return out
}

// runIn runs `runwatch args...` in process in e, with no terminal, and returns its exit code and outputs.
func runIn(t testing.TB, e env, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = dispatch(args, &out, &errOut, e)
	return code, out.String(), errOut.String()
}

// run is runIn in an environment of its own (testEnv).
func run(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runIn(t, testEnv(t), args...)
}
