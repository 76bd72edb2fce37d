package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/state"
)

// The runs of status --json are encoded in parallel and stitched together; a parser and a diff must see
// exactly what json.Encoder wrote before, for every fixture run (good, bad and hostile) and for none.
func TestWriteSnapshotJSONMatchesEncoder(t *testing.T) {
	env := state.NewEnv(0)
	env.Now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	locs, err := state.Discover([]string{"../testdata"}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := state.LoadAll(locs, env)
	if len(runs) < 10 {
		t.Fatalf("only %d fixture runs found", len(runs))
	}
	// A string a terminal would act on, to check the escaping of each stitched part.
	runs[0].Title = "title \u009b31m with C1 and \u202e bidi <&>"
	for _, rs := range [][]model.Run{runs, runs[:1], nil} {
		snap := snapshot(append([]model.Run(nil), rs...), env)
		var want bytes.Buffer
		enc := json.NewEncoder(terminalSafeJSONWriter{&want})
		enc.SetIndent("", "  ")
		if err := enc.Encode(snap); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeSnapshotJSON(&got, snap); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			i := 0
			for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
				i++
			}
			t.Fatalf("%d runs: output differs from json.Encoder at byte %d:\ngot  %q\nwant %q", len(rs), i,
				got.Bytes()[max(0, i-80):min(got.Len(), i+80)], want.Bytes()[max(0, i-80):min(want.Len(), i+80)])
		}
	}
}
