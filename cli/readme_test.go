package cli

import (
	"os"
	"strings"
	"testing"

	"runwatch/ui/keys"
)

// The README's keys table is the keymap's own rendering: a key added or renamed without updating the README
// fails here, so the README keeps telling the truth.
func TestReadmeKeysTableIsTheKeymap(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "<!-- keys:start")
	end := strings.Index(readme, "<!-- keys:end -->")
	if start < 0 || end < start {
		t.Fatal("README.md lacks the <!-- keys:start --> ... <!-- keys:end --> section")
	}
	section := readme[start:end]
	section = strings.TrimSpace(section[strings.Index(section, "\n")+1:])
	want := strings.TrimSpace(keys.DefaultKeyMap(false).MarkdownTable())
	if section != want {
		t.Fatalf("README keys table differs from the keymap; replace it with:\n%s", want)
	}
}

// The two set-up commands the README promises are the ones CI and the demo test prove.
func TestReadmeNamesTheSetupCommands(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"go run . demo", "go test ./..."} {
		if !strings.Contains(string(data), cmd) {
			t.Errorf("README.md does not show %q", cmd)
		}
	}
	for name, c := range commands {
		if c.hidden {
			continue
		}
		if name != defaultCommand && !strings.Contains(string(data), "runwatch "+name) && !strings.Contains(string(data), "\n  "+name+" ") {
			t.Errorf("README.md never mentions the %s command", name)
		}
	}
}
