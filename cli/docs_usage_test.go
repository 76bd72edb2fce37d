package cli

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"runwatch/model"
)

// TestUsageDocIsTheHelp: the usage block at the top of docs/USAGE.md is `runwatch help` itself, exit codes
// included, so the guide cannot drift from the binary. -update rewrites the block.
func TestUsageDocIsTheHelp(t *testing.T) {
	const path = "../docs/USAGE.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "<!-- usage:start")
	end := strings.Index(doc, "<!-- usage:end -->")
	if start < 0 || end < start {
		t.Fatal("docs/USAGE.md lacks the <!-- usage:start --> ... <!-- usage:end --> section")
	}
	head := doc[:start+strings.Index(doc[start:], "\n")+1]
	want := "```text\n" + helpOf(t, "help") + "```\n"
	if doc[len(head):end] == want {
		return
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(head+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("docs/USAGE.md's usage block differs from `runwatch help`; run go test ./cli -run TestUsageDocIsTheHelp -update, or replace it with:\n%s", want)
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
