package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"runwatch/state"
	"runwatch/termsafe"
)

// assertPlainTerminalText fails if text printed by a plain-text subcommand (status table, brief) could act
// on a terminal: these outputs carry no styling of runwatch's own, so any escape sequence came from a run
// file. The check parses with the same ANSI parser the dashboard uses, so a sequence is found whatever its
// introducer (ESC, or an 8-bit C1 byte encoded as UTF-8), and also rejects bare control bytes, invalid UTF-8
// bidirectional overrides, which reorder the text around them, and zero-width marks, which hide in it.
func assertPlainTerminalText(t *testing.T, what, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("%s: output is not valid UTF-8", what)
	}
	var state byte
	for rest := text; rest != ""; {
		seq, width, n, newState := ansi.DecodeSequence(rest, state, nil)
		if width == 0 && seq != "\n" && seq != "\t" {
			i := len(text) - len(rest)
			t.Errorf("%s: %q at byte %d can act on a terminal: …%q…", what, seq, i, text[max(0, i-30):min(len(text), i+30)])
			return
		}
		for _, r := range seq {
			if r >= 0x80 && termsafe.Hidden(r) {
				t.Errorf("%s: hidden rune %U (bidi, zero-width or C1) in output", what, r)
				return
			}
		}
		state, rest = newState, rest[n:]
	}
}

// TestStatusAndBriefNeverDriveTheTerminal prints the hostile fixture runs (testdata/bad/hostile: every kind
// of escape sequence and control character in every field the readers take from files: titles, phase
// names, errors, status words, checklist values, lock holders and hosts, resume hints, log lines, progress
// notes, phase outputs, tasks, gates) through `runwatch status` and `runwatch brief`, and checks that
// nothing in the output can act on a terminal. The dashboard side is ui.TestHostileFilesNeverReachTheTerminal.
func TestStatusAndBriefNeverDriveTheTerminal(t *testing.T) {
	t.Parallel()
	root := hostileCopy(t)
	// A lock file name is a holder name too; git cannot hold this one comfortably, so it is made here.
	hostileName := filepath.Join(root, "jonggrang", ".jonggrang", "locks", "agent\nwith\x1b]52;c;AAAA\x07\xfe.lock")
	if err := os.WriteFile(hostileName, []byte(`{"agent_id": "x", "pid": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	var code int
	within(t, "status table", func() { code = dispatch([]string{"status", root}, &out, &errOut, testEnv(t)) })
	if code != exitProblems || strings.Count(out.String(), "\n") != 3 {
		t.Fatalf("status exit %d, want 1 and two runs:\n%s\nstderr %q", code, out.String(), errOut.String())
	}
	assertPlainTerminalText(t, "status table", out.String())
	assertPlainTerminalText(t, "status stderr", errOut.String())

	locs, err := state.Discover([]string{root}, 0)
	if err != nil || len(locs) != 2 {
		t.Fatalf("discover: %d runs, %v", len(locs), err)
	}
	for _, loc := range locs {
		out.Reset()
		errOut.Reset()
		within(t, "brief", func() { code = dispatch([]string{"brief", loc.Dir}, &out, &errOut, testEnv(t)) })
		if code != exitOK || !strings.Contains(out.String(), "#") {
			t.Fatalf("brief %s: exit %d\n%s\nstderr %q", loc.Dir, code, out.String(), errOut.String())
		}
		// The brief must still carry the hostile text, neutralised, or this test would prove nothing.
		if !strings.Contains(out.String(), "cursor moved") && !strings.Contains(out.String(), "clipboard write") {
			t.Errorf("brief of %s shows none of the hostile fields:\n%s", loc.Dir, out.String())
		}
		assertPlainTerminalText(t, "brief "+filepath.Base(loc.Dir), out.String())
		assertPlainTerminalText(t, "brief stderr", errOut.String())
	}
}

// TestActionOutputNeverDrivesTheTerminal runs each action subcommand on the hostile runs, as a dry run and
// as a refusal, and checks what it prints: the preview quotes file bytes, and refusals quote values from
// the files (lock holders, checklist values).
func TestActionOutputNeverDrivesTheTerminal(t *testing.T) {
	t.Parallel()
	root := hostileCopy(t)
	rdir := filepath.Join(root, "resumable", "hostile-run-20260215T000000Z")
	jdir := filepath.Join(root, "jonggrang", ".jonggrang", ".output", "features", "hostile-feature")
	// Without its lock of unknown liveness the resumable run accepts edits, so their previews are printed.
	unlocked := filepath.Join(root, "unlocked", "hostile-unlocked-20260215T000000Z")
	if err := os.CopyFS(unlocked, os.DirFS(rdir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(unlocked, "run.lock")); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"check", unlocked, "CB_S2_VERIFY"}, {"uncheck", unlocked, "CB_S1_READY"}, {"step", unlocked},
		{"unlock", rdir}, {"unlock", rdir, "run.lock"}, {"check", rdir, "CB_S2_VERIFY"}, {"step", rdir},
		{"unlock", jdir}, {"unlock", jdir, "dev.lock"}, {"retry", jdir}, {"pause", jdir}, {"step", jdir},
	}
	for _, c := range commands {
		var out, errOut bytes.Buffer
		within(t, "runwatch "+c[0], func() { dispatch(append(c, "--dry-run"), &out, &errOut, testEnv(t)) })
		assertPlainTerminalText(t, c[0]+" stdout", out.String())
		assertPlainTerminalText(t, c[0]+" stderr", errOut.String())
	}
}

// hostileCopy copies testdata/bad/hostile into a temp dir, so nothing a test runs can touch the repository;
// each command runs in an environment of its own (testEnv), which keeps the user's files out.
func hostileCopy(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "hostile")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "testdata", "bad", "hostile"))); err != nil {
		t.Fatal(err)
	}
	return root
}
