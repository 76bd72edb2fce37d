package jonggrang

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// Every prefix of a js-yaml manifest cut at a line end, as writeFileSync's truncate-then-write lets a reader
// see it, either fails to parse or is recognised as torn, up to the last line of validation; only what
// follows validation (locks, context_usage, which default to empty) may be missing from a read that passes.
func TestTornReasonsEveryLinePrefix(t *testing.T) {
	for _, fid := range []string{fidLogin, fidBilling, fidTypo, fidCompact} {
		whole := readFixture(t, fid)
		if why := TornReasons([]byte(whole)); len(why) != 0 {
			t.Fatalf("%s: the whole manifest is judged torn: %v", fid, why)
		}
		end := strings.Index(whole, "\nlocks:")
		if end < 0 {
			t.Fatalf("%s: no locks line", fid)
		}
		lines := 0
		for i := 0; i < end; i++ {
			if whole[i] != '\n' {
				continue
			}
			lines++
			prefix := whole[:i+1]
			if _, err := parseManifest([]byte(prefix)); err != nil {
				continue
			}
			if len(TornReasons([]byte(prefix))) == 0 {
				t.Errorf("%s: prefix of %d lines (ends %q) is taken for a whole manifest", fid, lines, lastLine(prefix))
			}
		}
		if lines < 20 {
			t.Fatalf("%s: only %d prefixes tried", fid, lines)
		}
	}
}

func readFixture(t *testing.T, fid string) string {
	t.Helper()
	p := copyFixture(t)
	return p.read(filepath.Join(p.feature(fid), ManifestName))
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

// Each mark of a cut names itself.
func TestTornReasonsNamesTheCut(t *testing.T) {
	whole := readFixture(t, fidLogin)
	cases := []struct {
		name, cutBefore, want string
	}{
		{"inside phases", "  '11':\n", "active_phases lists 6.5, 11, 12, 13, 14, 15, 16, 17, which phases lacks"},
		{"before agents", "agents:\n", "agents is missing"},
		{"inside agents", "validation:\n", "validation is missing"},
		{"inside validation", "  tests_passed: false\n", "validation lacks tests_passed, coverage_met"},
		{"before status", "status: running\n", "it has no status"},
	}
	for _, c := range cases {
		i := strings.Index(whole, c.cutBefore)
		if i < 0 {
			t.Fatalf("%s: %q not in the fixture", c.name, c.cutBefore)
		}
		why := strings.Join(TornReasons([]byte(whole[:i])), "; ")
		if !strings.Contains(why, c.want) {
			t.Errorf("%s: reasons %q, want %q", c.name, why, c.want)
		}
	}
	if why := TornReasons([]byte("status: running\nphases: [")); why != nil {
		t.Errorf("bytes that are not YAML are another problem, got %v", why)
	}
}

// A torn read healed by the writer before the second read leaves no trace; one that stays torn is an error
// (the run is blocked, never a clean run with fewer phases), read exactly twice.
func TestTornManifestReread(t *testing.T) {
	p := copyFixture(t)
	path := filepath.Join(p.feature(fidLogin), ManifestName)
	whole := p.read(path)
	torn := whole[:strings.Index(whole, "  '11':\n")]

	p.write(path, torn)
	calls := 0
	ld := loader{retryDelay: time.Millisecond, beforeRetry: func(string) { calls++; p.write(path, whole) }}
	r := ld.load(p.feature(fidLogin), realEnv())
	if calls != 1 || hasProblem(r, model.CodeManifestTorn) || len(r.Stages) != 18 {
		t.Errorf("healed: retries %d, stages %d, problems:%s", calls, len(r.Stages), problemList(r))
	}

	p.write(path, torn)
	calls = 0
	ld = loader{retryDelay: time.Millisecond, beforeRetry: func(string) { calls++ }}
	r = ld.load(p.feature(fidLogin), realEnv())
	pr := problem(t, r, model.CodeManifestTorn)
	if calls != 1 || pr.Severity != model.SeverityError || pr.Path != path ||
		!strings.Contains(pr.Message, "active_phases lists 6.5, 11,") || !strings.Contains(pr.Message, "read twice") {
		t.Errorf("stays torn: retries %d, problem %+v", calls, pr)
	}
	if r.Status != model.StatusBlocked || len(r.Stages) != 10 {
		t.Errorf("stays torn: status %s, %d stages (shown as read)", r.Status, len(r.Stages))
	}
}
