package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBriefCommand(t *testing.T) {
	t.Parallel()
	project, err := filepath.Abs(filepath.Join("..", "testdata", "jonggrang"))
	if err != nil {
		t.Fatal(err)
	}
	feature := filepath.Join(project, ".jonggrang", ".output", "features", "new-billing-mlopa001")
	// An empty config file keeps the user's own config out of the test.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("roots: ["+project+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := dispatch([]string{"brief", "--config", cfg, feature}, &out, &errb, testEnv(t)); code != 0 {
		t.Fatalf("brief of a run dir: exit %d, stderr %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "# Resuming feature: new-billing-mlopa001\n") ||
		!strings.Contains(out.String(), "## Awaiting input") {
		t.Fatalf("unexpected Markdown:\n%s", out.String())
	}

	out.Reset()
	if code := dispatch([]string{"brief", "--config", cfg, "new-bill", "--json"}, &out, &errb, testEnv(t)); code != 0 {
		t.Fatalf("brief by id prefix with --json after RUN: exit %d, stderr %s", code, errb.String())
	}
	var doc struct {
		Schema int    `json:"schema"`
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out.String())
	}
	if doc.Schema != 1 || doc.ID != "new-billing-mlopa001" || doc.Status != "awaiting-input" {
		t.Fatalf("unexpected JSON brief %+v", doc)
	}

	errb.Reset()
	if code := dispatch([]string{"brief", "--config", cfg, "no-such-run"}, &out, &errb, testEnv(t)); code != 1 ||
		!strings.Contains(errb.String(), "no-such-run") {
		t.Fatalf("unknown run: exit %d, stderr %q; want 1 naming the run", code, errb.String())
	}
	if code := dispatch([]string{"brief", "--config", cfg}, &out, &errb, testEnv(t)); code != 2 {
		t.Fatalf("missing RUN: exit %d, want 2", code)
	}
	if code := dispatch([]string{"brief", "--config", cfg, "a", "b"}, &out, &errb, testEnv(t)); code != 2 {
		t.Fatalf("two RUNs: exit %d, want 2", code)
	}
	if code := dispatch([]string{"brief", "--no-such-flag", "a"}, &out, &errb, testEnv(t)); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
}
