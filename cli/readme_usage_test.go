package cli

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"runwatch/model"
)

// TestReadmeUsage: the README's usage block is `runwatch help` itself, exit codes included, so the README
// cannot drift from the binary. -update rewrites the block.
func TestReadmeUsage(t *testing.T) {
	const path = "../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "<!-- usage:start")
	end := strings.Index(readme, "<!-- usage:end -->")
	if start < 0 || end < start {
		t.Fatal("README.md lacks the <!-- usage:start --> ... <!-- usage:end --> section")
	}
	head := readme[:start+strings.Index(readme[start:], "\n")+1]
	want := "```text\n" + helpOf(t, "help") + "```\n"
	if readme[len(head):end] == want {
		return
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(head+want+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("README usage block differs from `runwatch help`; run go test ./cli -run TestReadmeUsage -update, or replace it with:\n%s", want)
}

// TestReadmeDocumentsTheStatusSchema: every field of a run in status --json, and of its attention, is named in
// the README's status section, so a field added to the schema is documented when it lands.
func TestReadmeDocumentsTheStatusSchema(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "### `status`")
	end := strings.Index(readme[start+1:], "\n### ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no ### `status` section")
	}
	section := readme[start : start+1+end]
	for _, typ := range []reflect.Type{reflect.TypeOf(model.Run{}), reflect.TypeOf(model.Attention{})} {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(section, "`"+name+"`") {
				t.Errorf("README's status section does not name the %s field `%s`", typ.Name(), name)
			}
		}
	}
}
