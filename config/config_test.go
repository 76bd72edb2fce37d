package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFullFile(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, `roots: [/a, /b]
max_depth: 3
stale_after: 45m
poll: 2s
theme: light
read_only: true
keys:
  step: [S, f6]
resume_command:
  resumable: "opencode run --resume {{.Dir}}"
notify:
  bell: on
  desktop: osc777
  tmux: false
  command: 'notify-send runwatch "{{.ID}}: {{.Reason}}"'
  command_timeout: 3s
  on_complete: true
`)
	c, err := Load(p, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Roots) != 2 || c.MaxDepth != 3 || c.StaleAfter.D() != 45*time.Minute || c.Poll.D() != 2*time.Second ||
		c.Theme != "light" || !c.ReadOnly || c.Keys["step"][1] != "f6" || c.Path != p ||
		!strings.Contains(c.ResumeCommand["resumable"], "{{.Dir}}") {
		t.Fatalf("unexpected config %+v", c)
	}
	if n := c.Notify.Settings(); n.Disabled || n.Bell != "on" || n.Desktop != "osc777" || n.TmuxMessage != "off" ||
		n.CommandTimeout != 3*time.Second || !n.Completions || n.Existing || !strings.Contains(n.Command, "{{.Reason}}") {
		t.Fatalf("unexpected config %+v", c)
	}
}

func TestLoadErrorsNameFileAndProblem(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"stale_after: soon\n":                 "not a duration",
		"theme: neon\n":                       `theme "neon"`,
		"colour: red\n":                       "colour",
		"resume_command: {other: x}\n":        "unknown convention",
		"roots: [unterminated\n":              "config",
		"poll: -2s\n":                         "negative",
		"notify:\n  bell: loud\n":             `line 2: "loud": want auto, on or off`,
		"notify:\n  desktop: growl\n":         `line 2: "growl" is not a desktop notification protocol`,
		"notify:\n  command: 'x {{.Nope}}'\n": "notify.command",
		"notify:\n  sound: on\n":              "sound",
		// Checked at load by every command, not only by the dashboard or at X.
		"keys:\n  step: [S]\n  unlock: [S]\n":          `key "S" is bound to both "unlock" and "step"`,
		"keys:\n  setp: [S]\n":                         `line 2: unknown action "setp" (did you mean "step"?)`,
		"resume_command:\n  resumable: 'x {{.Dri}}'\n": `line 2: resume_command.resumable`,
	}
	for content, want := range cases {
		p := writeConfig(t, content)
		_, err := Load(p, os.Getenv)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v; want it to name %s and contain %q", content, err, p, want)
		}
	}
}

// TestUnknownKeysSayWhatWasMeant: an unknown key is named with its section, the key meant when one is close,
// and the keys the section takes, not yaml's "field rots not found in type config.Config".
func TestUnknownKeysSayWhatWasMeant(t *testing.T) {
	t.Parallel()
	for content, want := range map[string]string{
		"rots: [/a]\n":            `line 1: unknown key "rots" (did you mean "roots"?); the keys there are keys, max_depth, notify,`,
		"notify:\n  bel: on\n":    `line 2: unknown key "bel" under notify: (did you mean "bell"?); the keys there are bell, command,`,
		"ssh:\n  comand: [ssh]\n": `line 2: unknown key "comand" under ssh: (did you mean "command"?)`,
		"colour: red\n":           `line 1: unknown key "colour"; the keys there are`,
		"roots: /tmp/x\n":         "line 1: roots: want a list, such as [a, b], found `/tmp/x`",
		"max_depth: four\n":       "line 1: max_depth: want a whole number, found `four`",
		"read_only: yes please\n": "line 1: read_only: want true or false, found `yes please`",
		"theme: darkk\n":          `line 1: theme "darkk": want one of auto, dark, light, mono (did you mean "dark"?)`,
	} {
		p := writeConfig(t, content)
		_, err := Load(p, os.Getenv)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "config.Config") {
			t.Errorf("%q: error %v\nwant it to contain %q", content, err, want)
		}
	}
}

func TestMissingDefaultIsFineMissingExplicitIsNot(t *testing.T) {
	t.Parallel()
	c, err := load("", defaultIn(t.TempDir()), os.UserHomeDir)
	if err != nil || c.Theme != "auto" || c.StaleAfter.D() != 30*time.Minute {
		t.Fatalf("default: %+v, %v", c, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), os.Getenv); err == nil {
		t.Fatal("explicit missing config gave no error")
	}
}

// FuzzLoad: whatever the file holds, Load returns a config or an error naming the file, never a panic, and a
// config it accepts passes its own validation.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("roots: [/a]\nstale_after: 45m\npoll: 2s\ntheme: light\nread_only: true\nkeys:\n  step: [S]\n"))
	f.Add([]byte("resume_command:\n  resumable: 'opencode run {{.Brief}}'\n"))
	f.Add([]byte("stale_after: [1, 2]\n"))
	f.Add([]byte("&a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, os.Getenv)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := c.validate(&yaml.Node{}); err != nil {
			t.Fatalf("accepted a config that fails validation: %v", err)
		}
	})
}

// defaultIn is the default config path with $XDG_CONFIG_HOME at dir.
func defaultIn(dir string) func() string {
	return func() string {
		return defaultPath(func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return dir
			}
			return ""
		}, os.UserHomeDir)
	}
}

// noDefault is a default config path never reached: the tests that use it name their file.
func noDefault() string { return "" }

// TestRootsArePlaced: docs/CONFIG.md's own example, roots: [~/src], is the folder under the home directory,
// a relative root is read from the config's folder, a remote one is the host's, and ~user is refused at its
// line. Before, ~/src was taken as a folder named ~ in whatever folder runwatch ran in.
func TestRootsArePlaced(t *testing.T) {
	t.Parallel()
	home := func() (string, error) { return "/home/u", nil }
	p := writeConfig(t, "theme: auto\nroots:\n  - ~\n  - ~/src\n  - rel/x\n  - /abs\n  - host:/srv\n  - ssh://h/x\n")
	c, err := load(p, noDefault, home)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/home/u", "/home/u/src", filepath.Join(filepath.Dir(p), "rel", "x"), "/abs", "host:/srv", "ssh://h/x"}
	if !slices.Equal(c.Roots, want) || c.RootsLine != 2 {
		t.Errorf("roots %q at line %d, want %q at line 2", c.Roots, c.RootsLine, want)
	}
	c, err = load(writeConfig(t, "\nroots: [~/src]\n"), noDefault, home)
	if err != nil || !slices.Equal(c.Roots, []string{"/home/u/src"}) || c.RootsLine != 2 {
		t.Errorf("roots: [~/src]: %q at line %d, %v", c.Roots, c.RootsLine, err)
	}
	p = writeConfig(t, "roots:\n  - /a\n  - ~bob/src\n")
	if _, err := load(p, noDefault, home); err == nil || !strings.Contains(err.Error(), "config "+p+": line 3: roots: \"~bob/src\": ~user is not expanded") {
		t.Errorf("~bob/src: %v", err)
	}
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	if _, err := load(writeConfig(t, "roots: [~]\n"), noDefault, noHome); err == nil || !strings.Contains(err.Error(), "line 1: roots:") {
		t.Errorf("~ with no home: %v", err)
	}
	if c, err := load(writeConfig(t, "theme: dark\n"), noDefault, noHome); err != nil || c.RootsLine != 0 {
		t.Errorf("no roots: line %d, %v", c.RootsLine, err)
	}
}

// TestEveryLoadErrorNamesItsLine: each check of a config's values says where the value is written, as the
// decoder's errors do. `poll: 50ms` said only that it was below the floor.
func TestEveryLoadErrorNamesItsLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{"theme: auto\npoll: 50ms\n", "line 2: poll 50ms is below the floor"},
		{"theme: auto\npoll: -2s\n", "line 2: duration \"-2s\" is negative"},
		{"\ntheme: neon\n", `line 2: theme "neon"`},
		{"\nmax_depth: -1\n", "line 2: max_depth -1 is negative"},
		{"\nstale_after: soon\n", "line 2: \"soon\" is not a duration"},
		{"\nresume_command:\n  other: x\n", "line 3: resume_command: unknown convention"},
		{"\nresume_command:\n  resumable: 'x {{.Dri}}'\n", "line 3: resume_command.resumable"},
		{"\nresume_command:\n  resumable: './x {{.Dir}}'\n", "line 3: resume_command.resumable: the program"},
		{"notify:\n  bell: on\n  command: 'x {{.Nope}}'\n", "line 3: notify.command"},
		{"notify:\n  bell: on\n  command: 'bin/hook {{.ID}}'\n", "line 3: notify.command: the program"},
		{"notify:\n  bell: loud\n", `line 2: "loud": want auto, on or off`},
		{"notify:\n  desktop: growl\n", "line 2: "},
		{"notify:\n  command_timeout: x\n", "line 2: "},
		{"ssh:\n  runwatch: 'a b'\n", "line 2: ssh.runwatch"},
		{"ssh:\n  command: [./ssh]\n", "line 2: ssh.command: the program"},
		{"\nkeys:\n  step: [S]\n  unlock: [S]\n", "line 3: key \"S\" is bound to both"},
		{"\nkeys:\n  setp: [S]\n", `line 3: unknown action "setp"`},
		{"\nstage_order:\n  'a[': [x]\n", "line 3: stage_order"},
		{"\nrots: [/a]\n", `line 2: unknown key "rots"`},
		{"\nroots: /a\n", "line 2: roots: want a list"},
		{"\nroots: [unterminated\n", "line 1: did not find"},
		{"\nroots: ['-h:/x']\n", "line 2: roots:"},
		{"\nroots: ['']\n", "line 2: roots: an empty root"},
		{"\nroots: [/a, null]\n", "line 2: roots: an empty root"},
	} {
		p := writeConfig(t, tc.body)
		_, err := load(p, noDefault, func() (string, error) { return "/home/u", nil })
		if err == nil || !strings.HasPrefix(err.Error(), "config "+p+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v\nwant config %s: ... %q", tc.body, err, p, tc.want)
		}
	}
}

// Apply is where flags go over the config, every one of them in one call: a duration or a depth given
// replaces the file's, one not given keeps it, and --read-only or the file's read_only is read-only.
func TestApplyPutsFlagsOverTheConfig(t *testing.T) {
	t.Parallel()
	file := Config{StaleAfter: Duration(time.Hour), Poll: Duration(2 * time.Second), MaxDepth: 3}
	c := file
	c.Apply(Overrides{Poll: 5 * time.Second, ReadOnly: true})
	if c.Poll.D() != 5*time.Second || c.StaleAfter.D() != time.Hour || c.MaxDepth != 3 || !c.ReadOnly {
		t.Errorf("flags --poll 5s --read-only over the file: %+v", c)
	}
	c = file
	c.ReadOnly = true
	c.Apply(Overrides{MaxDepth: 7})
	if !c.ReadOnly || c.MaxDepth != 7 || c.Poll.D() != 2*time.Second {
		t.Errorf("read_only in the file, --max-depth 7: %+v", c)
	}
}
