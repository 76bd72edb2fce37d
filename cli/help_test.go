package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	// Registers -update, which TestHelpTexts and the README tests honour as the golden tests do.
	_ "github.com/charmbracelet/x/exp/golden"
)

// helpOf runs `runwatch args...` and insists on exit 0 with nothing on stderr.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := dispatch(args, &out, &errOut, testEnv(t)); code != exitOK || errOut.Len() > 0 {
		t.Fatalf("runwatch %s: exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// cliReference is docs/CLI.md: every help text, as `runwatch help` and `runwatch help COMMAND` print them.
func cliReference(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# runwatch command line\n\n")
	b.WriteString("Every help text, as runwatch prints it. Generated: `go test ./cli -run TestHelpTexts -update` " +
		"rewrites this file, and the test fails when a help text and this file differ.\n")
	section := func(title, text string) {
		b.WriteString("\n## `" + title + "`\n\n```text\n" + text + "```\n")
	}
	section("runwatch help", helpOf(t, "help"))
	for _, name := range commandNames(false) {
		section("runwatch help "+name, helpOf(t, "help", name))
	}
	return b.String()
}

// TestHelpTexts is the golden test of every help text; the golden file is docs/CLI.md, the reference that
// README links to.
func TestHelpTexts(t *testing.T) {
	t.Parallel()
	want := cliReference(t)
	const path = "../docs/CLI.md"
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) == want {
		return
	}
	gotSections, wantSections := strings.Split(string(got), "\n## "), strings.Split(want, "\n## ")
	for i, w := range wantSections {
		if i >= len(gotSections) || gotSections[i] != w {
			g := ""
			if i < len(gotSections) {
				g = gotSections[i]
			}
			t.Errorf("docs/CLI.md differs from the help text; first difference in:\n--- docs/CLI.md\n%s\n--- help\n%s", g, w)
			break
		}
	}
	t.Fatal("run: go test ./cli -run TestHelpTexts -update")
}

// Every way of asking for a command's help prints the same text on stdout and exits 0, in the house style.
func TestHelpIsTheSameEveryWay(t *testing.T) {
	t.Parallel()
	main := helpOf(t, "help")
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help", "dashboard"}, {"dashboard", "--help"}, {".", "--help"}} {
		if got := helpOf(t, args...); got != main {
			t.Errorf("runwatch %s differs from runwatch help", strings.Join(args, " "))
		}
	}
	longFlag := regexp.MustCompile(`(?m)^ {2}(-[a-z], |    )--[a-z][a-z-]+`)
	for _, name := range commandNames(false) {
		help := helpOf(t, "help", name)
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {name, "-help"}} {
			if got := helpOf(t, args...); got != help {
				t.Errorf("runwatch %s differs from runwatch help %s", strings.Join(args, " "), name)
			}
		}
		if !strings.Contains(help, "Usage:\n  runwatch "+name) {
			t.Errorf("help %s has no usage line:\n%s", name, help)
		}
		if n := strings.Count(help, "\n  # "); n < 1 || (n < 2 && name != "version") || n > 3 {
			t.Errorf("help %s has %d examples, want 2 or 3", name, n)
		}
		fs := newFlagSet(name)
		commands[name].define(fs)
		for _, f := range fs.names() {
			if !strings.Contains(help, "--"+f) {
				t.Errorf("help %s does not list --%s", name, f)
			}
		}
		if len(fs.names()) > 0 && !longFlag.MatchString(help) {
			t.Errorf("help %s does not list flags as --flag:\n%s", name, help)
		}
		if strings.Contains(help, "Usage of") {
			t.Errorf("help %s is the flag package's default", name)
		}
	}
	if status := helpOf(t, "help", "status"); !strings.Contains(status, "(default table)") || !strings.Contains(status, "-o, --output FORMAT") {
		t.Errorf("status help lacks the -o alias or a default:\n%s", status)
	}
	for _, e := range exitCodes {
		if !strings.Contains(main, fmt.Sprintf("\n  %-3d  %s", e.code, strings.Fields(e.meaning)[0])) {
			t.Errorf("runwatch help does not list exit code %d", e.code)
		}
	}
}

// A flag another engineer adds shows up in help by itself: help is built from the flags the command parses.
// Not parallel: it registers a command in the package's table, which every other command reads.
func TestHelpListsFlagsFromTheDefinition(t *testing.T) {
	name := "test-only"
	register(command{name: name, summary: "a command only this test has", examples: []example{{"a", "b"}, {"c", "d"}},
		define: func(fs *flagSet) runFunc {
			fs.Duration("wait-for", 0, "how long to wait for `WHEN`")
			fs.String("colour", "blue", "which colour")
			return func([]string, io.Writer, io.Writer) int { return 0 }
		}})
	t.Cleanup(func() { delete(commands, name) })
	help := helpOf(t, name, "--help")
	for _, want := range []string{"--wait-for WHEN", "how long to wait for WHEN", "--colour TEXT", "(default blue)"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if !strings.Contains(helpOf(t, "help"), "  "+name+" ") {
		t.Error("runwatch help does not list the new command")
	}
}
