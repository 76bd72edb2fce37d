package yamledit

import (
	"strconv"
	"strings"
	"testing"
)

const manifest = `feature_id: add-login-form-mlop4860
description: Add login form with validation # a comment that must stay
status: failed
current_phase: 6
updated_at: '2026-02-16T05:31:02.417Z'
phases:
  '5':
    name: complexity
    status: completed
    completed_at: '2026-02-16T05:00:00.000Z'
  '6':
    name: brainstorming
    status: failed
    started_at: '2026-02-16T05:01:00.000Z'
    completed_at: '2026-02-16T05:02:00.000Z'
    output:
      error: Awaiting human input (brainstorming)
    output_files: []
  '7':
    name: architecting
    status: pending
    output: {error: boom}
locks: []
context_usage: 0.42
`

func TestScalarSpliceKeepsEverythingElse(t *testing.T) {
	got, err := Apply([]byte(manifest), []Edit{
		{Path: []string{"status"}, Value: String("in_progress")},
		{Path: []string{"current_phase"}, Value: Number("6.5")},
		{Path: []string{"updated_at"}, Value: String("2026-11-30T01:00:00.000Z")},
		{Path: []string{"phases", "6", "status"}, Value: String("pending")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"status: failed\n", "status: in_progress\n",
		"current_phase: 6\n", "current_phase: 6.5\n",
		"updated_at: '2026-02-16T05:31:02.417Z'", "updated_at: '2026-11-30T01:00:00.000Z'",
		"    status: failed\n", "    status: pending\n",
	).Replace(manifest)
	if string(got) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestStructuralEdits(t *testing.T) {
	got, err := Apply([]byte(manifest), []Edit{
		{Path: []string{"phases", "6", "output"}, Value: Null()},
		{Path: []string{"phases", "7", "output"}, Value: Null()},
		{Path: []string{"phases", "5", "started_at"}, Value: Null()},
		{Path: []string{"phases", "7", "completed_at"}, Value: String("2026-11-30T01:00:00.000Z")},
		{Path: []string{"paused_by"}, Value: String("it's me")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"    output:\n      error: Awaiting human input (brainstorming)\n", "    output: null\n",
		"    output: {error: boom}\n", "    output: null\n    completed_at: '2026-11-30T01:00:00.000Z'\n",
		"    completed_at: '2026-02-16T05:00:00.000Z'\n", "    completed_at: '2026-02-16T05:00:00.000Z'\n    started_at: null\n",
		"context_usage: 0.42\n", "context_usage: 0.42\npaused_by: 'it''s me'\n",
	).Replace(manifest)
	if string(got) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestCRLFNoFinalNewlineAndDoubleQuotes(t *testing.T) {
	src := "status: \"running\"\r\nphases:\r\n  '1':\r\n    status: running\r\ncurrent_phase: 1"
	got, err := Apply([]byte(src), []Edit{
		{Path: []string{"status"}, Value: String("paused")},
		{Path: []string{"phases", "1", "completed_at"}, Value: String("2026-11-30T01:00:00.000Z")},
		{Path: []string{"current_phase"}, Value: Null()},
		{Path: []string{"updated_at"}, Value: String("2026-11-30T01:00:00.000Z")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "status: \"paused\"\r\nphases:\r\n  '1':\r\n    status: running\r\n    completed_at: '2026-11-30T01:00:00.000Z'\r\ncurrent_phase: null\r\nupdated_at: '2026-11-30T01:00:00.000Z'\r\n"
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestSequenceAtKeyIndentAndEmptyValue(t *testing.T) {
	src := "active_phases:\n- 1\n- 2\ncompleted_at:\nstatus: running # live\n"
	got, err := Apply([]byte(src), []Edit{
		{Path: []string{"active_phases"}, Value: Null()},
		{Path: []string{"completed_at"}, Value: String("2026-11-30T01:00:00.000Z")},
		{Path: []string{"status"}, Value: String("true")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "active_phases: null\ncompleted_at: '2026-11-30T01:00:00.000Z'\nstatus: 'true' # live\n"
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		edit      Edit
		msg       string
	}{
		{"two documents", "a: 1\n---\nb: 2\n", Edit{[]string{"a"}, Number("2")}, "more than one"},
		{"not a mapping", "- 1\n", Edit{[]string{"a"}, Number("2")}, "not a mapping"},
		{"missing parent", "a: 1\n", Edit{[]string{"b", "c"}, Number("2")}, "parent is not a mapping"},
		{"flow mapping add", "a: {b: 1}\n", Edit{[]string{"a", "c"}, Number("2")}, "not a block mapping"},
		{"truncated", "a: 'x\n", Edit{[]string{"a"}, Number("2")}, "found unexpected end"},
		{"too large", "a: '" + strings.Repeat("x", MaxBytes) + "'\n", Edit{[]string{"a"}, Number("2")}, "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply([]byte(tc.src), []Edit{tc.edit})
			if err == nil || !strings.Contains(err.Error(), tc.msg) || got != nil {
				t.Fatalf("err = %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestAliasBombIsNotExpanded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 30; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("status: running\n")
	got, err := Apply([]byte(b.String()), []Edit{{Path: []string{"status"}, Value: String("paused")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(got), "status: paused\n") {
		t.Fatalf("got %q", got[len(got)-40:])
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func FuzzApply(f *testing.F) {
	f.Add([]byte(manifest), "status", "paused")
	f.Add([]byte("a:\n  b: 'x'\n"), "a", "1")
	f.Fuzz(func(t *testing.T, src []byte, key, value string) {
		if _, err := Parse(src); err != nil {
			return
		}
		got, err := Apply(src, []Edit{{Path: []string{key}, Value: String(value)}})
		if err != nil {
			return
		}
		// Round trip: the edited key holds the value, and Apply already proved nothing else moved.
		n, err := Parse(got)
		if err != nil {
			t.Fatalf("result does not parse: %v", err)
		}
		if v := Lookup(n, key); v == nil || v.Value != value {
			t.Fatalf("key %q holds %v, want %q", key, v, value)
		}
	})
}

// Found by FuzzApply: a value with a line break was single-quoted, which YAML folds into a space, and the
// check compared against that same encoding, so the change of text went unnoticed.
func TestControlCharactersRoundTrip(t *testing.T) {
	for _, value := range []string{"\r", "line one\nline two", "tab\there", "bell\a", "nel\u0085", "ls\u2028"} {
		got, err := Apply([]byte("a: 1\nb: 'x'\n"), []Edit{{Path: []string{"b"}, Value: String(value)}})
		if err != nil {
			t.Fatalf("%q: %v", value, err)
		}
		n, err := Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		if v := Lookup(n, "b"); v == nil || v.Value != value {
			t.Errorf("%q written as %q reads back as %v", value, got, v)
		}
	}
}

func TestInvalidUTF8ValueRefused(t *testing.T) {
	if _, err := Apply([]byte("a: 1\n"), []Edit{{Path: []string{"a"}, Value: String("\xff")}}); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("err = %v, want a refusal naming UTF-8", err)
	}
}
