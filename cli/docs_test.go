package cli

import (
	"os"
	"strings"
	"testing"

	"runwatch/ui/keys"
)

// The keys table of docs/DASHBOARD.md is the keymap's own rendering: a key added or renamed without updating
// the table fails here, so the docs keep telling the truth.
func TestKeysTableIsTheKeymap(t *testing.T) {
	data, err := os.ReadFile("../docs/DASHBOARD.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "<!-- keys:start")
	end := strings.Index(doc, "<!-- keys:end -->")
	if start < 0 || end < start {
		t.Fatal("docs/DASHBOARD.md lacks the <!-- keys:start --> ... <!-- keys:end --> section")
	}
	section := doc[start:end]
	section = strings.TrimSpace(section[strings.Index(section, "\n")+1:])
	want := strings.TrimSpace(keys.DefaultKeyMap(false).MarkdownTable())
	if section != want {
		t.Fatalf("docs/DASHBOARD.md's keys table differs from the keymap; replace it with:\n%s", want)
	}
}

// The two set-up commands the README promises are the ones CI and the demo test prove, and every command
// is described in docs/USAGE.md, which the README links to.
func TestReadmeNamesTheSetupCommands(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go run . demo", "go test ./...", "(docs/USAGE.md)"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not show %q", want)
		}
	}
	usage, err := os.ReadFile("../docs/USAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range commands {
		if c.hidden {
			continue
		}
		if name != defaultCommand && !strings.Contains(string(usage), "runwatch "+name) && !strings.Contains(string(usage), "\n  "+name+" ") {
			t.Errorf("docs/USAGE.md never mentions the %s command", name)
		}
	}
}
