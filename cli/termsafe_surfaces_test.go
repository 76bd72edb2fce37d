package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"runwatch/notify"
	"runwatch/state/resumable/resumabletest"
	"runwatch/termsafe"
	"runwatch/tmuxsafe"
)

// unsafeClasses is one sample of every class termsafe.Hidden stands for (and of the sequences removed
// whole), each to be carried in a run folder's name: the id every surface prints.
var unsafeClasses = []struct {
	name, sample string
	marked       bool // a single rune that Screen, JSON and the brief each show as a mark
}{
	{"C0 bell", "\a", true}, {"C0 backspace", "\b", true}, {"DEL", "\x7f", true}, {"C1 NEL", "\u0085", true},
	{"C1 CSI", "\u009b31m", true}, {"CSI", "\x1b[2J", false}, {"OSC 52", "\x1b]52;c;ZXZpbA==\a", false},
	{"bidi override", "\u202e", true}, {"bidi isolate", "\u2066", true}, {"arabic letter mark", "\u061c", true},
	{"zero width space", "\u200b", true}, {"word joiner", "\u2060", true}, {"BOM", "\ufeff", true},
	{"mongolian vowel separator", "\u180e", true}, {"soft hyphen", "\u00ad", true}, {"invalid UTF-8", "\xff", false},
	{"zero width joiner", "\u200d", false}, // the screen drops it with emoji's other width joiners
}

// mark finds what each output writes for a hidden rune: caret notation or <U+XXXX> on a screen, \xNN or
// \uNNNN in the brief and in JSON.
var mark = regexp.MustCompile(`\\[bfnrt]|\^[@-_?]|<U\+[0-9A-F]{4}>|\\x[0-9a-f]{2}|\\u[0-9a-f]{4}`)

// TestEveryUnsafeClassIsTreatedAlikeEverywhere feeds each class through the status table, wide and json,
// the brief in Markdown and JSON, events, a notification and its tmux message, and the line unlock writes
// in run.log: none lets a hidden rune through as it is, and each shows a mark where the rune was and keeps
// the text after it (a C1 CSI ate "31m"; a notification and run.log showed a space, issue 36). The dashboard's frame gets the same samples in
// ui.TestHostileTextNeverReachesTerminal.
func TestEveryUnsafeClassIsTreatedAlikeEverywhere(t *testing.T) {
	t.Parallel()
	fixture := filepath.Join(resumabletest.Copy(t), "reports", resumabletest.Sphinx)
	root := t.TempDir()
	for i, c := range unsafeClasses {
		dir := filepath.Join(root, fmt.Sprintf("cls%02d-a%sb-20260215T000000Z", i, c.sample))
		resumabletest.CopyDir(t, fixture, dir)
	}
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		within(t, strings.Join(args, " "), func() { dispatch(args, &out, &errOut, testEnv(t)) })
		noHidden(t, strings.Join(args[:len(args)-1], " ")+" stderr", errOut.String())
		return out.String()
	}
	surfaces := map[string]string{
		"status":         run("status", root),
		"status -o wide": run("status", "-o", "wide", root),
		"status --json":  run("status", "--json", root),
		"events":         run("events", "--timeout", "1ms", root),
	}
	for i, c := range unsafeClasses {
		dir := filepath.Join(root, fmt.Sprintf("cls%02d-a%sb-20260215T000000Z", i, c.sample))
		surfaces["brief "+c.name] = run("brief", dir)
		surfaces["brief --json "+c.name] = run("brief", "--json", dir)
		plain := notify.Plain(filepath.Base(dir))
		surfaces["notification "+c.name] = plain
		surfaces["tmux message "+c.name] = tmuxsafe.Message(plain)
	}
	// An action writes untrusted text into run.log: unlock quotes the lock it clears, whose holder here
	// carries the sample. The line stays one line, with the sample's mark.
	for i, c := range unsafeClasses {
		dir := filepath.Join(root, fmt.Sprintf("cls%02d-a%sb-20260215T000000Z", i, c.sample))
		lock := fmt.Sprintf("host=\"cls%02d-a%sb-2026\"\npid=\"123\"\nuser=\"u\"\n", i, c.sample)
		if err := os.WriteFile(filepath.Join(dir, "run.lock"), []byte(lock), 0o644); err != nil {
			t.Fatal(err)
		}
		run("unlock", "--yes", "--force", dir, "run.lock")
		data, err := os.ReadFile(filepath.Join(dir, "run.log"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, "stale_lock_cleared payload=") || !strings.HasSuffix(string(data), "\n") {
			t.Errorf("unlock of %s: run.log's last line is %q, not the one line that clears the lock", c.name, last)
		}
		surfaces["run.log "+c.name] = last
	}
	for what, out := range surfaces {
		noHidden(t, what, out)
	}
	for i, c := range unsafeClasses {
		if !c.marked {
			continue
		}
		id := regexp.MustCompile(fmt.Sprintf(`cls%02d-a(.*?)b-2026`, i))
		// What follows the rune is kept: the sample's visible text ("31m" after a C1 CSI).
		rest := strings.Map(func(r rune) rune {
			if termsafe.Hidden(r) {
				return -1
			}
			return r
		}, c.sample)
		for _, what := range []string{"status", "status -o wide", "status --json", "events", "brief " + c.name,
			"brief --json " + c.name, "notification " + c.name, "tmux message " + c.name, "run.log " + c.name} {
			m := id.FindStringSubmatch(surfaces[what])
			switch {
			case m == nil:
				t.Errorf("%s: the run of %s is not shown:\n%s", what, c.name, surfaces[what])
			case !mark.MatchString(m[1]):
				t.Errorf("%s shows %s as %q, not as a mark", what, c.name, m[1])
			case mark.ReplaceAllString(m[1], "") != rest:
				t.Errorf("%s shows %s as %q: the text after the mark is not %q", what, c.name, m[1], rest)
			}
		}
	}
}

func noHidden(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && r != '\t' && termsafe.Hidden(r) {
			t.Errorf("%s: hidden rune %U reached the output:\n%q", what, r, out)
			return
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8", what)
	}
}
