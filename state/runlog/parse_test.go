package runlog

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"runwatch/model"
)

// sampleLog is the irm example of docs/FORMATS.md B.5 plus the other event shapes listed there.
const sampleLog = `[2026-02-15T01:50:43Z] run bootstrapped
  run_id=20260215T014733Z
  lock_file=/cfg/reports/irm/run.lock
[2026-02-15T01:50:44Z] lock_acquired pid=4242 run_id=20260215T014733Z
[2026-02-15T01:58:34Z] S1 artifact integrity
  artifact=/cfg/reports/irm/artifacts/s1/refactor-manifest.json
  sha256=635dde0596fb9adbb0cca1f450d28f3e1ea6ef1b452f1de1c7f67b3dac5c204b
  size_bytes=2611
[2026-02-15T01:58:57Z] S1 complete
  next_stage=S2
  commit=abc1234 Add the refactor manifest
[2026-02-15T01:59:03Z] stopping after MAX_STAGES=1
  resume_target_stage=S2
[2026-02-15T01:59:03Z] lock_released run_id=20260215T014733Z
[2026-02-15T02:00:00Z] stage_blocked stage=EQ1 failed_metrics=a,b
[2026-02-15T02:00:01Z] stale_lock_replaced payload={"host": "h", "pid": 1}
[2026-02-15T02:00:02Z] stale-lock-replaced missing_fields=""
acquired_at_utc="2026-02-14T18:43:50Z"
host="other-host"
[2026-02-15T02:00:03Z] stage-complete M0 next=M1
[2026-02-15T02:00:04Z] bootstrap RUN_ID=r1 RUN_ROOT=/tmp/r
[2026-02-15T02:00:05Z] full plan complete
  completed_stages=S2,S3,S4
[2026-02-15T02:00:06Z] run_complete stop_reason=completed_all_phases
[2026-02-15T02:00:07Z] checked 3 files, errors=0
`

func kv(pairs ...string) []model.KV {
	var out []model.KV
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, model.KV{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func TestParseEntriesSample(t *testing.T) {
	entries, rest := ParseEntries([]byte(sampleLog), 100)
	if len(rest) != 0 {
		t.Fatalf("rest = %q, want none", rest)
	}
	type want struct {
		event  string
		level  model.Level
		fields []model.KV
		cont   int
	}
	wants := []want{
		{"", model.LevelNone, kv("run_id", "20260215T014733Z", "lock_file", "/cfg/reports/irm/run.lock"), 2},
		{"lock_acquired", model.LevelNone, kv("pid", "4242", "run_id", "20260215T014733Z"), 0},
		{"stage_artifact_integrity", model.LevelNone, kv("stage", "S1",
			"artifact", "/cfg/reports/irm/artifacts/s1/refactor-manifest.json",
			"sha256", "635dde0596fb9adbb0cca1f450d28f3e1ea6ef1b452f1de1c7f67b3dac5c204b",
			"size_bytes", "2611"), 3},
		{"stage_complete", model.LevelGood, kv("stage", "S1", "next_stage", "S2", "commit", "abc1234 Add the refactor manifest"), 2},
		{"", model.LevelWarn, kv("MAX_STAGES", "1", "resume_target_stage", "S2"), 1},
		{"lock_released", model.LevelNone, kv("run_id", "20260215T014733Z"), 0},
		{"stage_blocked", model.LevelError, kv("stage", "EQ1", "failed_metrics", "a,b"), 0},
		{"stale_lock_replaced", model.LevelWarn, kv("payload", `{"host": "h", "pid": 1}`), 0},
		{"stale_lock_replaced", model.LevelWarn, kv("missing_fields", "", "acquired_at_utc", "2026-02-14T18:43:50Z", "host", "other-host"), 2},
		{"stage_complete", model.LevelGood, kv("stage", "M0", "next", "M1"), 0},
		{"bootstrap", model.LevelNone, kv("RUN_ID", "r1", "RUN_ROOT", "/tmp/r"), 0},
		{"", model.LevelGood, kv("completed_stages", "S2,S3,S4"), 1},
		{"run_complete", model.LevelGood, kv("stop_reason", "completed_all_phases"), 0},
		{"", model.LevelNone, kv("errors", "0"), 0},
	}
	if len(entries) != len(wants) {
		t.Fatalf("got %d entries, want %d: %+v", len(entries), len(wants), entries)
	}
	for i, w := range wants {
		e := entries[i]
		if !e.HasTime || e.Event != w.event || e.Level != w.level || len(e.Continuation) != w.cont ||
			!reflect.DeepEqual(e.Fields, w.fields) {
			t.Errorf("entry %d %q: event %q level %q fields %v cont %d; want %q %q %v %d",
				i, e.Message, e.Event, e.Level, e.Fields, len(e.Continuation), w.event, w.level, w.fields, w.cont)
		}
	}
	if got := entries[0].Time; !got.Equal(time.Date(2026, 2, 15, 1, 50, 43, 0, time.UTC)) {
		t.Errorf("time = %v", got)
	}
	if entries[0].Offset != 100 || entries[1].Offset != 100+int64(strings.Index(sampleLog, "[2026-02-15T01:50:44Z]")) {
		t.Errorf("offsets = %d, %d", entries[0].Offset, entries[1].Offset)
	}
	if entries[0].Message != "run bootstrapped" || entries[0].Continuation[0] != "  run_id=20260215T014733Z" {
		t.Errorf("message/continuation not kept raw: %q %q", entries[0].Message, entries[0].Continuation)
	}
}

func TestParseEntriesTimestampForms(t *testing.T) {
	cases := []struct {
		line string
		want time.Time
	}{
		{"[2026-02-15T01:50:43Z] x", time.Date(2026, 2, 15, 1, 50, 43, 0, time.UTC)},
		{"[2026-02-15T01:50:43.250Z] x", time.Date(2026, 2, 15, 1, 50, 43, 250e6, time.UTC)},
		{"[2026-02-15T03:50:43+02:00] x", time.Date(2026, 2, 15, 1, 50, 43, 0, time.UTC)},
		{"[2026-02-15 01:50:43Z] x", time.Date(2026, 2, 15, 1, 50, 43, 0, time.UTC)},
		{"[2026-02-15T01:50:43] x", time.Date(2026, 2, 15, 1, 50, 43, 0, time.UTC)},
	}
	for _, c := range cases {
		entries, _ := ParseEntries([]byte(c.line+"\n"), 0)
		if len(entries) != 1 || !entries[0].HasTime || !entries[0].Time.Equal(c.want) || entries[0].Message != "x" {
			t.Errorf("%q: got %+v", c.line, entries)
		}
	}
	for _, notStamp := range []string{"[INFO] x", "[2026-02-15T01:50:43Z x", "[2026-13-45T01:50:43Z] x", "2026-02-15T01:50:43Z x", " [2026-02-15T01:50:43Z] x"} {
		entries, _ := ParseEntries([]byte(notStamp+"\n"), 0)
		if len(entries) != 1 || entries[0].HasTime || entries[0].Message != notStamp {
			t.Errorf("%q should be a timeless line, got %+v", notStamp, entries)
		}
	}
}

func TestParseEntriesLeadingContinuationAndRest(t *testing.T) {
	data := "  orphan=1\nraw payload\n[2026-02-15T01:50:43Z] stage_start stage=S1\n[2026-02-15T01:50:44Z] stage_comp"
	entries, rest := ParseEntries([]byte(data), 0)
	if len(entries) != 2 {
		t.Fatalf("got %d entries: %+v", len(entries), entries)
	}
	if entries[0].HasTime || entries[0].Message != "  orphan=1" || !reflect.DeepEqual(entries[0].Continuation, []string{"raw payload"}) ||
		!reflect.DeepEqual(entries[0].Fields, kv("orphan", "1")) || entries[0].Offset != 0 {
		t.Errorf("leading continuation entry = %+v", entries[0])
	}
	if string(rest) != "[2026-02-15T01:50:44Z] stage_comp" {
		t.Errorf("rest = %q", rest)
	}
}

func TestParseEntriesByteOrderMark(t *testing.T) {
	data := "\ufeff[2026-02-15T01:50:43Z] run_bootstrap mode=resume-auto\n\ufeff[2026-02-15T01:50:44Z] later\n"
	entries, _ := ParseEntries([]byte(data), 0)
	if len(entries) != 1 || !entries[0].HasTime || entries[0].Event != "run_bootstrap" || len(entries[0].Continuation) != 1 {
		t.Fatalf("a BOM at the start of the file should not hide the first entry (only there): %+v", entries)
	}
	path := writeFile(t, t.TempDir(), "run.log", data)
	if tail, _, err := ReadTail(path, 5); err != nil || !sameEntries(tail, entries) {
		t.Fatalf("ReadTail with a BOM: %+v %v", tail, err)
	}
	path = writeFile(t, t.TempDir(), "run.log", "\ufeff[2026-02-15T01:50:43Z] stage_start stage=A\n")
	if got := startOrder(path); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("StageStartOrder with a BOM = %q", got)
	}
}

func TestParseEntriesCRLFAndInvalidUTF8(t *testing.T) {
	data := "[2026-02-15T01:50:43Z] lock_acquired pid=7\r\n  note=\xff\xfe ok\r\n"
	entries, _ := ParseEntries([]byte(data), 0)
	if len(entries) != 1 {
		t.Fatalf("entries = %+v", entries)
	}
	e := entries[0]
	if e.Message != "lock_acquired pid=7" || e.Event != "lock_acquired" || e.Continuation[0] != "  note=\xff\xfe ok" {
		t.Errorf("CRLF/invalid UTF-8 entry = %+v", e)
	}
	if !reflect.DeepEqual(e.Fields, kv("pid", "7", "note", "\xff\xfe ok")) {
		t.Errorf("fields = %q", e.Fields)
	}
}

func TestParseEntriesCapsLongLines(t *testing.T) {
	long := strings.Repeat("é", MaxLineBytes) // 2 bytes each: the cut falls on a rune boundary
	data := "[2026-02-15T01:50:43Z] big\n" + long + "\n"
	entries, _ := ParseEntries([]byte(data), 0)
	if len(entries) != 1 || len(entries[0].Continuation) != 1 {
		t.Fatalf("entries = %d", len(entries))
	}
	c := entries[0].Continuation[0]
	wantKept := MaxLineBytes
	if !strings.HasPrefix(c, long[:wantKept]) || !strings.HasSuffix(c, elisionMarker(len(long)-wantKept)) {
		t.Errorf("capped line: %d bytes, suffix %q", len(c), c[len(c)-40:])
	}
	// An odd cap position must back off to the rune start rather than keep half a rune.
	odd := "x" + long
	entries, _ = ParseEntries([]byte(odd+"\n"), 0)
	got := entries[0].Message
	if !strings.HasSuffix(got, elisionMarker(len(odd)-(MaxLineBytes-1))) || strings.Contains(got, "\xc3…") {
		t.Errorf("odd cut: suffix %q", got[len(got)-40:])
	}
}

func TestAppendMergesPieces(t *testing.T) {
	data := []byte(sampleLog)
	whole, _ := ParseEntries(data, 0)
	for cut := 0; cut <= len(data); cut++ {
		got := splitParse(data, cut)
		if !sameEntries(got, whole) {
			t.Fatalf("cut at %d: pieces differ from whole", cut)
		}
	}
}

// splitParse parses data in two pieces the way a follower does: rest carried over, entries merged by Append.
func splitParse(data []byte, cut int) []model.LogEntry {
	first, rest := ParseEntries(data[:cut], 0)
	buf := append(append([]byte(nil), rest...), data[cut:]...)
	second, _ := ParseEntries(buf, int64(cut-len(rest)))
	return Append(first, second)
}

func sameEntries(a, b []model.LogEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.Time.Equal(y.Time) || x.HasTime != y.HasTime || x.Message != y.Message || x.Event != y.Event ||
			x.Offset != y.Offset || x.Level != y.Level || !slices.Equal(x.Continuation, y.Continuation) ||
			len(x.Fields) != len(y.Fields) {
			return false
		}
		for j := range x.Fields {
			if x.Fields[j] != y.Fields[j] {
				return false
			}
		}
	}
	return true
}

func FuzzParseEntries(f *testing.F) {
	f.Add([]byte(sampleLog), 17)
	f.Add([]byte("  lead\n[2026-02-15T01:50:43Z] a\r\nb\n[2026-02-15T01:50:43.5+01:00] x=\"q \\\" r\" y={\"a\": [1, \"]\"]}\n"), 5)
	f.Add([]byte("[2026-02-15T01:50:43Z] S1 complete\n\xff\xfe\n[x"), 30)
	f.Add(bytes.Repeat([]byte("a"), MaxLineBytes+3), 9)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		whole, rest := ParseEntries(data, 0)
		if !bytes.HasSuffix(data, rest) || bytes.IndexByte(rest, '\n') >= 0 {
			t.Fatalf("rest %q is not the trailing partial line", rest)
		}
		if cut < 0 {
			cut = -cut
		}
		cut = cut % (len(data) + 1)
		if got := splitParse(data, cut); !sameEntries(got, whole) {
			t.Fatalf("parsing in pieces at %d differs from parsing whole", cut)
		}
		s := newStream(0)
		for i := 0; i < len(data); i += 7 {
			s.feed(data[i:min(len(data), i+7)])
		}
		if got := s.take(); !sameEntries(got, whole) {
			t.Fatalf("streamed parse differs from ParseEntries")
		}
		for _, e := range whole {
			if len(e.Message) > MaxLineBytes+40 {
				t.Fatalf("message of %d bytes escaped the cap", len(e.Message))
			}
		}
	})
}
