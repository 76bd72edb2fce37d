package resumable

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	rt "runwatch/state/resumable/resumabletest"
)

// jsonText's shortcut for plain strings gives what decoding them gives, escapes and bad UTF-8 included.
func TestJSONTextIsWhatDecodingGives(t *testing.T) {
	for _, raw := range []string{`"M0"`, `""`, `"2026-11-01T08:26:52Z"`, `"a\"b"`, `"tab\tand \u00e9"`, "\"\xff\xfe\"",
		`"é ok"`, `12`, `1.5e3`, `true`, `null`, `{"a":1}`, `["x"]`} {
		want := ""
		var s string
		var n json.Number
		if json.Unmarshal([]byte(raw), &s) == nil {
			want = s
		} else if json.Unmarshal([]byte(raw), &n) == nil {
			want = n.String()
		}
		if got := jsonText(json.RawMessage(raw)); got != want {
			t.Errorf("jsonText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// The artifacts listing proves a file absent only through folders it listed whole: a symlink, a folder
// listed in part or one it never reached leaves the file to be looked for.
func TestArtifactListingProvesAbsenceOnlyFromWholeFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "artifacts")
	for _, dir := range []string{"checkpoints", "commits", "linked-target"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "commits", "commit-ledger.json"), []byte(`{"entries":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("linked-target", filepath.Join(root, "evidence")); err != nil {
		t.Fatal(err)
	}
	seen := listArtifacts(root, true)
	cases := map[string]bool{
		"commits/commit-ledger.json":           false, // there
		"commits/other.json":                   true,  // commits/ listed whole, no such name
		"bootstrap/run-bootstrap-summary.json": true,  // no bootstrap/ at all
		"evidence/stage-commit-ledger.json":    false, // evidence is a link: followed by the reader
	}
	for rel, want := range cases {
		if got := seen.absent(root, filepath.Join(root, rel)); got != want {
			t.Errorf("absent(%s) = %v, want %v", rel, got, want)
		}
	}
	seen.dirs[root] = listedDir{entries: seen.dirs[root].entries, more: true}
	if seen.absent(root, filepath.Join(root, "bootstrap", "run-bootstrap-summary.json")) {
		t.Error("a root listed in part proved a file absent")
	}
	if names, ok := seen.names(filepath.Join(root, "checkpoints")); !ok || len(names) != 0 {
		t.Errorf("checkpoints as listed: %v %v, want the empty listing", names, ok)
	}
	if unread := (artifactListing{dirs: map[string]listedDir{}}); unread.absent(root, filepath.Join(root, "commits", "x")) {
		t.Error("a listing that read nothing proved a file absent")
	}
}

// TestLoadWithoutListingChangesNothingElse: a reader that asks for no artifacts' listing (the dashboard)
// holds none, and every other part of the run reads as with it.
func TestLoadWithoutListingChangesNothingElse(t *testing.T) {
	root := rt.Copy(t)
	state := filepath.Join(rt.Run(root, rt.IRM), "state.env")
	env := testEnv(t)
	with := Load(state, env)
	env.NoArtifactListing = true
	without := Load(state, env)
	if len(with.Resumable.Artifacts) == 0 {
		t.Fatal("the run has no listing to leave out")
	}
	if without.Resumable.Artifacts != nil {
		t.Errorf("artifacts listed: %v", without.Resumable.Artifacts)
	}
	without.Resumable.Artifacts = with.Resumable.Artifacts
	a, _ := json.Marshal(with)
	b, _ := json.Marshal(without)
	if string(a) != string(b) {
		t.Errorf("the run reads otherwise without its listing:\n%s\n%s", a, b)
	}
}
