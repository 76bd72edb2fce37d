// Tests that the dashboard says only what is so: enter means no, read-only refuses, messages expire, the
// filter and hide-done count, the Detail cursor keeps its place.

package ui

import (
	"strings"
	"testing"
	"time"

	"runwatch/ui/app"
)

// Enter in a [y/N] question is the capital N: no.
func TestEnterMeansNo(t *testing.T) {
	t.Parallel()
	actor := &recordingActor{}
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{Actor: actor})
	m = send(t, m, press("P"))
	if m.confirmDialog() == nil {
		t.Fatal("no dialog")
	}
	m = send(t, m, press("enter"))
	if m.confirmDialog() != nil || actor.applied != 0 || !strings.Contains(plain(m), "nothing was changed") {
		t.Fatalf("enter did not cancel: applied %d\n%s", actor.applied, plain(m))
	}
}

// A mutating key in read-only mode is answered, not ignored.
func TestReadOnlyAnswersMutatingKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{Actor: &recordingActor{}, ReadOnly: true})
	m = send(t, m, press("U"))
	if out := plain(m); !strings.Contains(out, "read-only: U") {
		t.Fatalf("U in read-only mode said nothing:\n%s", out)
	}
}

// Errors go at the next key or after errorTTL; a newer note replaces an older error; i opens the last
// message whole.
func TestMessagesExpireAndNeverHideNewer(t *testing.T) {
	t.Parallel()
	now := testNow
	m := newTestModel(t, 60, 20, sampleRuns(), app.Options{Now: func() time.Time { return now }})
	long := "refused: " + strings.Repeat("a long reason ", 10) + "END"
	m = send(t, m, app.ErrorMsg{Err: errString(long)})
	if out := plain(m); !strings.Contains(out, "✗ refused") || !strings.Contains(out, "i reads all") {
		t.Fatalf("a long error is not shown cut with the way to read it:\n%s", out)
	}
	m = send(t, m, press("i"))
	if p := m.pagerOverlay(); p == nil || !strings.Contains(p.Text, "END") {
		t.Fatal("i did not open the whole message")
	}
	m = send(t, m, press("esc"))
	m = send(t, m, app.ErrorMsg{Err: errString("kaput")})
	m = send(t, m, press("j"))
	if strings.Contains(plain(m), "kaput") {
		t.Fatal("an error outlived the next key")
	}
	m = send(t, m, app.ErrorMsg{Err: errString("kaput again")})
	now = now.Add(app.ErrorTTL + time.Second)
	if strings.Contains(plain(m), "kaput again") {
		t.Fatal("an error outlived its time")
	}
	m = send(t, m, app.ErrorMsg{Err: errString("old error")})
	m = send(t, m, app.AppliedMsg{Summary: "copied 12 bytes"})
	if out := plain(m); strings.Contains(out, "old error") || !strings.Contains(out, "copied 12 bytes") {
		t.Fatalf("a newer note is hidden by an older error:\n%s", out)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestFilterTermsAndHideDone(t *testing.T) {
	m := newTestModel(t, 140, 40, sampleRuns(), app.Options{})
	ids := func(m Model) string { return strings.Join(listed(t, m), ",") }
	filter := func(m Model, txt string) Model {
		m = send(t, m, press("/"))
		for _, r := range txt {
			m = send(t, m, press(string(r)))
		}
		return send(t, m, press("enter"))
	}
	for txt, want := range map[string]string{
		"kind:resumable":   "irm-backfill-20261103T120000Z,old-done",
		"!kind:resumable":  "add-login-form-mlop4860,pay-flow",
		"is:stalled":       "add-login-form-mlop4860",
		"has:lock !pay":    "add-login-form-mlop4860",
		"is:needs-you":     "add-login-form-mlop4860,pay-flow",
		"has:stale-lock":   "add-login-form-mlop4860",
		"login is:stalled": "add-login-form-mlop4860",
	} {
		got := filter(m, txt)
		if ids(got) != want {
			t.Errorf("/%s: %s, want %s", txt, ids(got), want)
		}
		if runsFilter(t, got) != txt {
			t.Errorf("/ did not start empty: filter %q after typing %q", runsFilter(t, got), txt)
		}
		m = send(t, got, press("esc"))
	}
	m = send(t, m, press("."))
	if strings.Contains(ids(m), "old-done") || !strings.Contains(plain(m), "hiding 1 done") {
		t.Fatalf(". did not hide the completed run or say so: %s\n%s", ids(m), plain(m))
	}
	m = send(t, m, press("."))
	m = send(t, m, press("s"))
	if ids(m) != "add-login-form-mlop4860,irm-backfill-20261103T120000Z,old-done,pay-flow" {
		t.Fatalf("s did not sort by name: %s", ids(m))
	}
}
