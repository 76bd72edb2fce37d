package jonggrang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/model"
)

// WorkTypeOf says what the manifest's reader says, or that it cannot tell.
func TestWorkTypeOfAgreesWithTheReaderOrCannotTell(t *testing.T) {
	dir := t.TempDir()
	base := "feature_id: f\ndescription: d\nstatus: running\ncurrent_phase: 1\nphases:\n  '1':\n    name: setup\n    status: running\n"
	for _, c := range []struct {
		name, text, want string
		ok               bool
	}{
		{"plain", "work_type: MEDIUM\n" + base, "MEDIUM", true},
		{"quoted", "work_type: 'small'\n" + base, "small", true},
		{"missing", base, "", false},
		{"twice", "work_type: SMALL\n" + base + "work_type: LARGE\n", "", false},
		{"not a plain word", "work_type: [a, b]\n" + base, "", false},
		{"with a comment", "work_type: LARGE # big\n" + base, "", false},
		{"nested only", base + "  meta:\n    work_type: SMALL\n", "", false},
	} {
		path := filepath.Join(dir, c.name, "MANIFEST.yaml")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok := WorkTypeOf(path)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: WorkTypeOf = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
		if ok {
			run := Load(filepath.Dir(path), model.Env{})
			if run.Jonggrang == nil || !strings.EqualFold(run.Jonggrang.WorkType, got) {
				t.Errorf("%s: the reader says work_type %+v, the scan %q", c.name, run.Jonggrang, got)
			}
		}
	}
	if _, ok := WorkTypeOf(filepath.Join(dir, "none", "MANIFEST.yaml")); ok {
		t.Error("a missing manifest: sure of its work_type")
	}
}
