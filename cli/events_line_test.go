package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/fixturetest"
)

// A run's events line written by hand is byte for byte what line made of the runEvent by encoding/json, for
// generated runs and runs full of hostile strings, added and changed.
func TestRunEventLineAsLine(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 20); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{"../testdata", dir}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, state.NewEnv(0))
	hostile := "t \"q\" \\ <b>&</b> \n\x1b[31m \u009b \u202e \u2028 caf\u00e9 \xff"
	extra := runs[0]
	extra.Title, extra.CrashSigns = hostile, []string{hostile}
	extra.Log = &model.LogRef{Path: hostile, SizeBytes: 7, Undone: []string{hostile}}
	extra.Attention = model.Attention{NeedsYou: true, Rank: 2, Code: hostile, Reason: hostile}
	runs = append(runs, extra, model.Run{ID: hostile})
	at := time.Date(2026, 12, 1, 9, 0, 0, 120000000, time.FixedZone("", 3600))
	for i, r := range runs {
		for _, changed := range [][]string{nil, {"log", hostile}} {
			typ := "run-added"
			if changed != nil {
				typ = "run-changed"
			}
			var want, got bytes.Buffer
			if err := (&eventWriter{out: &want}).line(runEvent{Type: typ, At: at.UTC(), Changed: changed, Run: &r}); err != nil {
				t.Fatal(err)
			}
			if err := (&eventWriter{out: &got}).runEventLine(typ, at, changed, &r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("run %d (%s):\ngot  %s\nwant %s", i, typ, got.Bytes(), want.Bytes())
			}
		}
	}
	if len(runs) < 30 {
		t.Fatalf("only %d runs read", len(runs))
	}
}

// events writes its runs in the compact form (model.Run.AppendWireJSON, saying "compact":true) only to a
// runwatch that is linked to it over ssh and asked for it (remote.CompactEnv); a person's events, and an
// older dashboard's, get the full form.
func TestEventsWritesTheCompactFormOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		want bool
	}{{nil, false}, {[]string{remote.CompactEnv + "=1"}, true}} {
		cmd, stdin, stdout := startLinkedEvents(t, c.env, nil, "--", dir)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev struct {
				Type    string `json:"type"`
				Compact bool   `json:"compact"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Type == "run-added" {
				if ev.Compact != c.want {
					t.Errorf("with %q: a run-added line says compact %v, want %v", c.env, ev.Compact, c.want)
				}
				break
			}
		}
		stdin.Close()
		_ = cmd.Wait()
	}
}
