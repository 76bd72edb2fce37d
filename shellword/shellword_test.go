package shellword

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// hostile are names a run folder, an id or a path may carry: every one must reach the program as the very
// bytes it was, through each real shell a person may paste a command into.
var hostile = []string{
	"plain-run_1.2", "", "two words", "it's", `back\slash`, `x\`, `\'`, `'\''`, "$(touch pwned)", "`id`",
	"a;b", "a|b&c", "*", "?", "[ab]", "{a,b}", "~root", "=ls", "%self", "-n", "line\nbreak", "tab\there",
	"#hash", "a#b", "!bang", "$HOME", `"dq"`, "é ü 日本", "\x1b[31mred", "semi;colon'and\\both",
}

func TestQuoteInRealShells(t *testing.T) {
	// Each shell prints its arguments one per NUL, so a name with a newline stays one.
	shells := map[string][]string{
		"sh":   {"sh", "-c"},
		"bash": {"bash", "-c"},
		"zsh":  {"zsh", "-f", "-c"},
		"fish": {"fish", "--no-config", "-c"},
	}
	for name, argv := range shells {
		if _, err := exec.LookPath(argv[0]); err != nil {
			t.Errorf("%s is not installed: the quoting is not tried in it", argv[0])
			continue
		}
		for _, s := range hostile {
			line := `printf '%s\0' ` + Line([]string{s, "end"})
			dir := t.TempDir()
			cmd := exec.Command(argv[0], append(argv[1:], line)...)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("%s: %q quoted as %s: %v", name, s, Quote(s), err)
				continue
			}
			if want := s + "\x00end\x00"; string(out) != want {
				t.Errorf("%s: %q quoted as %s reads back as %q", name, s, Quote(s), out)
			}
			if bytes.Contains(out, []byte("pwned")) && !strings.Contains(s, "pwned") {
				t.Errorf("%s ran something", name)
			}
		}
	}
}

func TestQuoteLeavesPlainWordsBare(t *testing.T) {
	for _, s := range []string{"runwatch", "irm-20260215T014733Z", "/tmp/a/b.c", "--orphan-after", "1m30s", "host:path", "a,b", "key=value", "%2"} {
		if q := Quote(s); q != s {
			t.Errorf("Quote(%q) = %s: a word no shell reads otherwise is quoted", s, q)
		}
	}
	if q := Quote("it's"); q != `'it'"'"'s'` {
		t.Errorf("Quote(it's) = %s", q)
	}
}
