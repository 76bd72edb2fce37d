package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"runwatch/model"
	"runwatch/sim"
	"runwatch/state"
	"runwatch/state/fixturetest"
	"runwatch/watch"
)

// wireLines are lines as `runwatch events` writes them (each run by model's writer) for generated runs, the
// repository's test runs and runs holding every field, hostile strings and out-of-range values included.
func wireLines(t testing.TB) [][]byte {
	runs := wireRuns(t)
	var lines [][]byte
	for i := range runs {
		b := fmt.Appendf(nil, `{"protocol":%d,"type":"run-added","at":"2026-12-01T09:00:00.5Z","run":`, ProtocolVersion)
		b, err := runs[i].AppendJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, append(b, "}\n"...))
	}
	return append(lines, otherWireLines(t)...)
}

// wireRuns are the runs of wireLines: generated, the repository's test runs, and runs holding every field.
func wireRuns(t testing.TB) []model.Run {
	dir := t.TempDir()
	if _, err := sim.GenerateRuns(dir, 30); err != nil {
		t.Fatal(err)
	}
	locs, err := state.Discover([]string{"../testdata", dir}, 0)
	if _, err = state.SplitUnreadable(err); err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, state.NewEnv(0))
	hostile := "t \"q\" \\ <b>&</b> \n\x1b[31m \u009b \u202e \u2028 caf\u00e9 \xff \U0001F600"
	now := time.Date(2026, 12, 1, 9, 0, 0, 120000000, time.FixedZone("", 5*3600+1800))
	yes := true
	n := int64(-7)
	extra := runs[0]
	extra.Title, extra.ProjectRoot, extra.Archived, extra.CrashSigns = hostile, hostile, true, []string{hostile, ""}
	extra.Remote = &model.RemoteRef{Host: hostile, Root: "ssh://h/r", StaleSince: &now}
	extra.AgentPane = &model.AgentPane{Host: "h", PID: 7, Session: hostile, PaneID: "%3"}
	extra.ActiveAt, extra.UpdatedText = &now, "2026-12-01T08:59:00.000Z"
	extra.Resumable = &model.ResumableDetail{RunID: hostile, TaskName: hostile, Keys: model.PackKVs([]model.KV{{Key: hostile, Value: hostile}}),
		ChecklistKeys: model.PackKVs([]model.KV{}), ResumeHint: hostile, Checkpoints: []model.Checkpoint{model.NewCheckpoint(hostile, "", "", &now), {}},
		Ledger: []model.LedgerRow{{}}, Artifacts: []string{hostile}, StageOrderUncertain: true, StageOrderEvidence: []string{hostile},
		StageNext: model.PackStageLinks(map[string]string{"S1": hostile}), ReopensWithoutCheckpoint: true, LastError: hostile,
		Blocked: &model.StageBlocked{Stage: "S2", FailedMetrics: []string{hostile}, Time: &now}}
	extra.Stages = append(extra.Stages, model.Stage{Key: hostile, Name: hostile, Status: model.StageStatus(hostile),
		Checklist: []model.ChecklistItem{{Key: hostile, Done: true, Raw: hostile}}, ChecklistDone: &yes,
		Checkpoint: new(model.NewCheckpoint(hostile, "", "", &now)),
		Timing:     &model.StageTiming{Started: &now, UsualMedianSeconds: &n, Runs: 3}, StartedAt: &now, CompletedAt: &now,
	}.WithRare(model.StageRare{OrderUnknown: true, Error: hostile, SkipReason: hostile, Warnings: []string{hostile}, CompletedText: "2026-12-01T09:00:00.120+05:30", OutputFiles: []model.OutputFile{{Path: hostile}}}), model.Stage{Checklist: []model.ChecklistItem{}})
	extra.Log = &model.LogRef{Path: hostile, SizeBytes: 1 << 40, Undone: []string{hostile}}
	extra.Flags = []model.Flag{{Group: hostile, Name: hostile, Value: true, Raw: hostile}, {}}
	extra.Problems = []model.Problem{{Severity: model.SeverityError, Code: hostile, Message: hostile, Path: hostile}}
	extra.Gates = []model.Gate{{Name: hostile, Status: hostile, Blocked: true, Detail: hostile}}
	extra.Attention = model.Attention{NeedsYou: true, Rank: -3, Code: hostile, Reason: hostile, Action: model.Action(hostile), Command: hostile}
	return append(runs, extra, model.Run{ID: hostile, Resumable: &model.ResumableDetail{}}, model.Run{})
}

// otherWireLines are lines of every other type.
func otherWireLines(t testing.TB) [][]byte {
	hostile := "t \"q\" \\ <b>&</b> \n\x1b[31m \u009b \u202e \u2028 caf\u00e9 \xff \U0001F600"
	now := time.Date(2026, 12, 1, 9, 0, 0, 120000000, time.FixedZone("", 5*3600+1800))
	var lines [][]byte
	for _, v := range []any{
		map[string]any{"protocol": 1, "type": "run-removed", "at": now, "state_path": hostile, "id": hostile, "dir": hostile},
		map[string]any{"protocol": 1, "type": "log-appended", "at": now, "path": hostile, "state_path": "/s", "truncated": true,
			"rotated": true, "skipped": 3, "entries": []model.LogEntry{{Time: now, HasTime: true, Message: hostile, Offset: 9,
				Fields: []model.KV{{Key: "a", Value: hostile}}, Continuation: []string{hostile}}}},
		map[string]any{"protocol": 1, "type": "watch-health", "at": now, "health": watch.Health{Mode: "inotify", Err: hostile, Watches: 4}},
		map[string]any{"protocol": 1, "type": "heartbeat", "at": now},
		map[string]any{"protocol": 2, "type": "run-changed", "changed": []string{"log"}, "run": nil, "future": map[string]any{"x": []any{1.5, nil, true}}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	return lines
}

// The hand decoder of the hosts' lines agrees with json.Unmarshal on every line the writers write.
func TestWireDecodeAsUnmarshal(t *testing.T) {
	lines := wireLines(t)
	if len(lines) < 45 {
		t.Fatalf("only %d lines", len(lines))
	}
	names := newWireNames() // one for all the lines, as a stream has
	for i, line := range lines {
		var want, got wireEvent
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("line %d: json.Unmarshal: %v", i, err)
		}
		if err := decodeWire(line, &got, names); err != nil {
			t.Fatalf("line %d: %v\n%s", i, err, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d differs:\ngot  %+v\nwant %+v\n%s", i, got, want, line)
		}
	}
}

// A run read from a host's line is written out again as the host wrote it, by either decoder: a manifest's
// times keep the file's spelling ("…26.760Z", where Go writes "…26.76Z"), as the host's own status writes them
// (docs/FORMATS.md C.2). Before, a remote root's status --json and events wrote Go's.
func TestWireRunsWriteBackAsTheHostWroteThem(t *testing.T) {
	t.Parallel()
	names := newWireNames()
	texts := 0
	for i, line := range wireLines(t) {
		var ev, unmarshalled wireEvent
		if err := decodeWire(line, &ev, names); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if ev.Run == nil {
			continue
		}
		if err := json.Unmarshal(line, &unmarshalled); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		start := bytes.Index(line, []byte(`"run":`)) + len(`"run":`)
		want := line[start : len(line)-2] // the run's object, before "}\n"
		for how, r := range map[string]*model.Run{"decodeWire": ev.Run, "json.Unmarshal": unmarshalled.Run} {
			got, err := r.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			// As values: "\ufffd" read back is written as the character itself.
			var gotV, wantV any
			if json.Unmarshal(got, &gotV) != nil || json.Unmarshal(want, &wantV) != nil || !reflect.DeepEqual(gotV, wantV) {
				t.Fatalf("line %d read by %s writes back otherwise:\ngot  %s\nwant %s", i, how, got, want)
			}
		}
		texts += bytes.Count(want, []byte(`0Z"`))
	}
	if texts == 0 {
		t.Fatal("no time among the lines that Go would spell otherwise")
	}
}

// A run in the compact form a dashboard asks its hosts for (CompactEnv) decodes to the run its full form
// decodes to, and takes fewer bytes: a generated run's stages without the empty errors and checklists and
// the times their timing repeated (issue 35: 8.3 KB a run on the wire).
func TestCompactWireDecodesAsTheFullForm(t *testing.T) {
	t.Parallel()
	names := newWireNames()
	full, compact := 0, 0
	runs := wireRuns(t)
	// Judged in time, as events' runs are: each stage's timing, with what the others say is usual.
	h := model.NewHistory()
	for i := range runs {
		h.Observe(&runs[i])
	}
	for i := range runs[:len(runs)-3] { // not the hand-made ones
		model.JudgeTime(&runs[i], time.Now(), model.LivenessRules{}, h)
	}
	var filled model.Run // every field set, as TestWireDecodeKnowsEveryField's
	fill(reflect.ValueOf(&filled).Elem(), 0)
	runs = append(runs, filled)
	for i, r := range runs {
		var evs [2]wireEvent
		for j, form := range []string{"", `,"compact":true`} {
			b := fmt.Appendf(nil, `{"protocol":%d%s,"type":"run-added","at":"2026-12-01T09:00:00.5Z","run":`, ProtocolVersion, form)
			var err error
			if form == "" {
				b, err = r.AppendJSON(b)
			} else {
				b, err = r.AppendWireJSON(b)
			}
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, "}\n"...)
			if err := decodeWire(b, &evs[j], names); err != nil {
				t.Fatalf("run %d: %v\n%s", i, err, b)
			}
			if r.Kind != "" && strings.HasPrefix(r.Dir, "/") && !strings.Contains(r.Dir, "testdata") {
				if form == "" {
					full += len(b)
				} else {
					compact += len(b)
				}
			}
		}
		if !reflect.DeepEqual(evs[1], evs[0]) {
			t.Fatalf("run %d: compact form decodes to\n%+v\nwant\n%+v", i, evs[1].Run, evs[0].Run)
		}
	}
	if full == 0 || float64(compact) > 0.82*float64(full) {
		t.Errorf("the generated runs take %d bytes compact, %d full: want at most 82%%", compact, full)
	}
	// What the compact form adds is checked: a checkpoint that is not the run's, a path before its folder.
	for _, run := range []string{
		`{"dir":"/r","stages":[{"key":"S1","checkpoint_of":0}]}`,
		`{"dir":"/r","stages":[{"key":"S1","checkpoint_of":1}],"resumable":{"checkpoints":[{"file":"/c"}]}}`,
		`{"state_path@":"state.env","dir":"/r"}`,
		`{"dir":"/r","stages":[{"timing":{"usual":[1,2,3,4,5]}}]}`,
	} {
		line := fmt.Sprintf(`{"protocol":%d,"compact":true,"type":"run-added","run":%s}`, ProtocolVersion, run)
		if err := decodeWire([]byte(line), &wireEvent{}, nil); err == nil || !strings.HasPrefix(err.Error(), "at byte ") {
			t.Errorf("%s: %v, want an error that says where", line, err)
		}
	}
	t.Logf("generated runs: %d bytes compact, %d full", compact, full)
}

// What is not JSON, or not of the shape the writers write, is refused with where.
func TestWireDecodeRefusesBadLines(t *testing.T) {
	for _, line := range []string{
		``, `{`, `[]`, `{"type":"run-added"`, `{"type":"run-added",}`, `{"type":1}`, `{"protocol":"1"}`, `{"protocol":1.5}`,
		`{"protocol":01}`, `{"at":"yesterday"}`, `{"run":{"stages":[{"key":1}]}}`, `{"run":{"log":{"size_bytes":"9"}}}`,
		`{"run":{"stages":[}}`, `{"run":{"id":"a` + "\x01" + `"}}`, `{"x":tru}`, `{"x":[1,]}`, `{} {}`, `{"run":[]}`,
		`{"run":{"locks":[{"pid":"x"}]}}`, `{"type":"a" "b"}`, `{"protocol":99999999999999999999}`,
	} {
		var ev wireEvent
		err := decodeWire([]byte(line), &ev, newWireNames())
		if err == nil {
			t.Errorf("%q: accepted", line)
			continue
		}
		if !strings.HasPrefix(err.Error(), "at byte ") {
			t.Errorf("%q: %v (says not where)", line, err)
		}
		if json.Valid([]byte(line)) && json.Unmarshal([]byte(line), &wireEvent{}) == nil {
			t.Errorf("%q: json.Unmarshal takes it, the decoder refuses it: %v", line, err)
		}
	}
}

// Whatever the bytes, the decoder never panics, and never takes what is not JSON; on the writers' lines,
// cut or changed, it agrees with json.Unmarshal when both take them.
func FuzzWireDecode(f *testing.F) {
	for _, l := range wireLines(f) {
		f.Add(l)
	}
	for _, r := range wireRuns(f) {
		b, err := r.AppendWireJSON([]byte(`{"protocol":1,"compact":true,"type":"run-added","run":`))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(b, '}'))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var got wireEvent
		err := decodeWire(line, &got, newWireNames())
		if err != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("took a line that is not JSON: %q", line)
		}
	})
}

// Every field of a run, at every depth, set: a field the decoder does not know (one added to the model
// later) makes it disagree with json.Unmarshal here.
func TestWireDecodeKnowsEveryField(t *testing.T) {
	var r model.Run
	fill(reflect.ValueOf(&r).Elem(), 0)
	b, err := r.AppendJSON([]byte(`{"run":`))
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '}')
	var want, got wireEvent
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if err := decodeWire(b, &got, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("a field is lost:\ngot  %+v\nwant %+v\n%s", *got.Run, *want.Run, b)
	}
}

// fill sets every exported field that JSON carries to a value that is not zero, two elements in each list.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", depth))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(7 + depth))
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 9, 0, depth, 5, time.UTC)))
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// A stream's lines share the short strings they say: the second run's stage status and checklist key are
// the first's, not copies; a long one (a path) is its own; past maxWireNames no new one is held.
func TestWireNamesShareShortStrings(t *testing.T) {
	t.Parallel()
	line := func(id string) []byte {
		return []byte(`{"type":"run-added","run":{"id":"` + id + `","dir":"/a/path/long/enough/to/be/held/as/its/own/string/` + id +
			`","stages":[{"key":"S1","status":"completed","checklist":[{"key":"CB_S1_VERIFY_GREEN","done":true}]}]}}`)
	}
	names := newWireNames()
	var a, b wireEvent
	if err := decodeWire(line("a"), &a, names); err != nil {
		t.Fatal(err)
	}
	if err := decodeWire(line("b"), &b, names); err != nil {
		t.Fatal(err)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	sa, sb := a.Run.Stages[0], b.Run.Stages[0]
	if !same(string(sa.Status), string(sb.Status)) || !same(sa.Checklist[0].Key, sb.Checklist[0].Key) {
		t.Fatal("two runs of one stream hold their stage's status and checklist key twice")
	}
	if names.m[a.Run.Dir] != "" {
		t.Fatalf("a %d-byte path was held as a name", len(a.Run.Dir))
	}
	for i := range 2 * maxWireNames {
		names.of([]byte(fmt.Sprint("n", i)))
	}
	if len(names.m) > maxWireNames {
		t.Fatalf("%d names held, want at most %d", len(names.m), maxWireNames)
	}
}

// A decoded run's lists are made at their length, not grown by append (which held up to twice the room,
// and was a sixth of what a dashboard allocated while its hosts' runs loaded), and its times are not made
// one by one: a generated jonggrang run (19 phases, four times each) takes few allocations (issue 35).
func TestWireDecodeMakesListsAtTheirLength(t *testing.T) { // not parallel: testing.AllocsPerRun
	var line []byte
	for _, l := range wireLines(t) {
		if strings.Contains(string(l), `"kind":"jonggrang"`) && strings.Count(string(l), `"key":`) > 10 {
			line = l
			break
		}
	}
	if line == nil {
		t.Fatal("no generated jonggrang run among the lines")
	}
	var ev wireEvent
	if err := decodeWire(line, &ev, newWireNames()); err != nil {
		t.Fatal(err)
	}
	r := ev.Run
	caps := map[string][2]int{"stages": {len(r.Stages), cap(r.Stages)}, "problems": {len(r.Problems), cap(r.Problems)},
		"agents":        {len(r.Jonggrang.Agents), cap(r.Jonggrang.Agents)},
		"phase_outputs": {len(r.Jonggrang.PhaseOutputs), cap(r.Jonggrang.PhaseOutputs)},
		"active_phases": {len(r.Jonggrang.ActivePhases), cap(r.Jonggrang.ActivePhases)}}
	for name, lc := range caps {
		if lc[0] != lc[1] {
			t.Errorf("%s: %d elements in room for %d", name, lc[0], lc[1])
		}
	}
	names := newWireNames()
	allocs := testing.AllocsPerRun(20, func() {
		var ev wireEvent
		_ = decodeWire(line, &ev, names)
	})
	// 234 allocations with lists grown and times made one by one; 144 without; 215 with the texts of the
	// times JSON spells otherwise (the generated manifest's ".000Z"), which a local read keeps too.
	if allocs > 230 {
		t.Errorf("decoding a %d-stage jonggrang run took %.0f allocations, want at most 230", len(r.Stages), allocs)
	}
	t.Logf("%.0f allocations", allocs)
}
