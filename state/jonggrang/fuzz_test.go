package jonggrang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// addFixtureSeeds adds every fixture file whose name matches to the corpus.
func addFixtureSeeds(f *testing.F, match func(name string) bool) {
	f.Helper()
	err := filepath.WalkDir(fixtureSrc, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !match(d.Name()) {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil {
			f.Add(data)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
}

// FuzzParseManifest: any bytes give a manifest or a syntax error, never a panic, and what comes out is
// internally consistent (phases in numeric order, notes capped).
func FuzzParseManifest(f *testing.F) {
	addFixtureSeeds(f, func(name string) bool { return name == ManifestName })
	f.Add([]byte(aliasBomb()))
	f.Add([]byte("phases:\n  - {number: 2}\n  - {}\n---\nx: 1\n"))
	f.Add([]byte("current_phase: 1e400\nphases: {'nan': {status: 7}, '-0': null, '1e3': [], '0x10': {output: {error: {a: [1]}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxManifestBytes {
			return
		}
		m, err := parseManifest(data)
		if err != nil {
			return
		}
		for i := 1; i < len(m.Phases); i++ {
			if model.NumericLess(m.Phases[i].Key, m.Phases[i-1].Key) {
				t.Fatalf("phases out of order: %q before %q", m.Phases[i-1].Key, m.Phases[i].Key)
			}
		}
		if len(m.notes) > maxNotes+2 {
			t.Fatalf("%d notes; cap is %d", len(m.notes), maxNotes)
		}
	})
}

// FuzzParseLock: any lock bytes give a lock that judges to a verdict with reasons.
func FuzzParseLock(f *testing.F) {
	addFixtureSeeds(f, func(name string) bool { return strings.HasSuffix(name, ".lock") })
	f.Add([]byte(`{"agent_id":"a","files":["x"],"acquired_at":1771217415123,"pid":"12"}`))
	f.Add([]byte(`{"agent_id":null,"files":null,"acquired_at":"2026-02-16 05:00:00 +01:00","pid":1e3}`))
	env := model.Env{Now: time.Date(2026, 2, 16, 6, 0, 0, 0, time.UTC), Host: "h", Proc: fakeProc{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := judge(ParseLock("/p/.jonggrang/locks/a.lock", data), env)
		if l.Verdict == "" || len(l.Reasons) == 0 {
			t.Fatalf("no verdict or reason for %q: %+v", data, l)
		}
		if len(l.Raw) > maxLockRawBytes+64 {
			t.Fatalf("raw not capped: %d", len(l.Raw))
		}
	})
}

// FuzzPhaseOutput: any phase output bytes give an output or a problem naming the file.
func FuzzPhaseOutput(f *testing.F) {
	addFixtureSeeds(f, func(name string) bool { return outputName.MatchString(name) })
	f.Add([]byte(`{"phase":"6.5","role":"reviewer","output":{"approved":"no","score":{},"required_fixes":[null,1,{"fix":"x"}]}}`))
	f.Add([]byte(`{"phase":13,"role":"tester","output":{"tests_passed":1,"total":"12","failed_tests":"one"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var probs problemSink
		po, ok := parseOutputFile("08-x.json", "/p/08-x.json", data, &probs)
		if !ok && len(probs) == 0 {
			t.Fatal("rejected without a problem")
		}
		if ok && po.Phase == "" {
			t.Fatalf("no phase: %+v", po)
		}
	})
}

// FuzzParseTime: never panics, and what parses is a real UTC time.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-02-16T04:50:15.123Z", "2024-01-01 10:30:00 +02:00", "1771217415123", "20260215T014733Z", "Tue Jan 02 2024 10:00:00 GMT+0100 (CET)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tm, ok := parseTime(s); ok && tm.Location() != time.UTC {
			t.Fatalf("%q parsed to a non-UTC time %v", s, tm)
		}
	})
}

// fakeProc says every pid below 1000 is running, started long ago, so fuzzing does not touch real processes.
type fakeProc struct{}

func (fakeProc) Alive(pid int) bool { return pid > 0 && pid < 1000 }

func (fakeProc) StartTime(int) (time.Time, bool) {
	return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), true
}
