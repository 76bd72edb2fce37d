package brief

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"runwatch/state"
	"runwatch/state/resumable/resumabletest"
)

// TestFixtureBriefs builds the brief of every run in the shared fixtures (testdata/jonggrang and a copy of
// testdata/opencode) through the real readers.
func TestFixtureBriefs(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	jonggrangRoot, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "jonggrang"))
	if err != nil {
		t.Fatal(err)
	}
	opencode := resumabletest.Copy(t)
	// A fixed host and pid keep the mining run's stale lock the same on every machine.
	resumabletest.WriteJSONLock(t, filepath.Join(resumabletest.Run(opencode, resumabletest.Mining), "lock", "active.lock"),
		999999, "testhost", time.Date(2026, 2, 15, 14, 37, 31, 0, time.UTC))

	locs, err := state.Discover([]string{jonggrangRoot, filepath.Join(opencode, "reports")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) < 10 {
		t.Fatalf("expected every fixture run, found %d locations", len(locs))
	}
	env := testEnv(4242)
	seen := map[string]bool{}
	for _, loc := range locs {
		run := state.Load(loc, env)
		name := string(run.Kind) + "/" + filepath.Base(loc.Dir)
		if seen[name] {
			t.Fatalf("two fixture runs named %s", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			b := Build(run, env)
			md := b.Markdown()
			if !strings.HasPrefix(md, "# Resuming ") || !strings.Contains(md, "## Next steps") {
				t.Fatalf("brief lacks its headline or steps:\n%s", md)
			}
			requireGolden(t, b, false, jonggrangRoot, "$JONGGRANG", opencode, "$OPENCODE")
		})
	}
}
