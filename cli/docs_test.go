package cli

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"runwatch/model"
	"runwatch/ui/keys"
)

// markedBlock reads path and finds the generated block between `<!-- NAME:start …-->` and `<!-- NAME:end -->`:
// the document, where the block's text starts (after the start marker's line) and where it ends.
func markedBlock(t *testing.T, path, name string) (doc string, start, end int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc = string(data)
	open, closing := strings.Index(doc, "<!-- "+name+":start"), strings.Index(doc, "<!-- "+name+":end -->")
	if open < 0 || closing < open {
		t.Fatalf("%s lacks the <!-- %s:start --> ... <!-- %s:end --> block", path, name, name)
	}
	return doc, open + strings.Index(doc[open:], "\n") + 1, closing
}

// The keys table of docs/DASHBOARD.md is the keymap's own rendering: a key added or renamed without updating
// the table fails here, so the docs keep telling the truth.
func TestKeysTableIsTheKeymap(t *testing.T) {
	doc, start, end := markedBlock(t, "../docs/DASHBOARD.md", "keys")
	want := strings.TrimSpace(keys.DefaultKeyMap(false).MarkdownTable())
	if strings.TrimSpace(doc[start:end]) != want {
		t.Fatalf("docs/DASHBOARD.md's keys table differs from the keymap; replace it with:\n%s", want)
	}
}

// TestUsageDocIsTheHelp: the usage block at the top of docs/USAGE.md is `runwatch help` itself, exit codes
// included, so the guide cannot drift from the binary. -update rewrites the block.
func TestUsageDocIsTheHelp(t *testing.T) {
	const path = "../docs/USAGE.md"
	doc, start, end := markedBlock(t, path, "usage")
	want := "```text\n" + helpOf(t, "help") + "```\n"
	if doc[start:end] == want {
		return
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(doc[:start]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("docs/USAGE.md's usage block differs from `runwatch help`; run go test ./cli -run TestUsageDocIsTheHelp -update, or replace it with:\n%s", want)
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

// TestUsageDocumentsTheStatusSchema: every field of a run in status --json, and of its attention, is named in
// the status section of docs/USAGE.md, so a field added to the schema is documented when it lands.
func TestUsageDocumentsTheStatusSchema(t *testing.T) {
	data, err := os.ReadFile("../docs/USAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## `status`")
	end := strings.Index(doc[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("docs/USAGE.md has no ## `status` section")
	}
	section := doc[start : start+1+end]
	for _, typ := range []reflect.Type{reflect.TypeOf(model.Run{}), reflect.TypeOf(model.Attention{})} {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(section, "`"+name+"`") {
				t.Errorf("docs/USAGE.md's status section does not name the %s field `%s`", typ.Name(), name)
			}
		}
	}
}
