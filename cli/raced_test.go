package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runwatch/state/atomicfile"
)

// Issue 37 row 14 through the subcommand: a writer that takes no lock renames its checklist between
// runwatch's last check and its rename. When the edit still applies to the writer's bytes, check makes it
// there (exit 0, the writer's key kept) and stderr says it raced; when the writer ticked the item itself, the
// check is refused (exit 1) with the writer's file in place, and stderr says it was not applied.
func TestCheckRacingAWriterSaysWhatHappened(t *testing.T) {
	t.Parallel()
	if !atomicfile.CanReportDisplaced {
		t.Skip("this build renames plainly: a write landing in between is overwritten unseen")
	}
	for _, tc := range []struct {
		name, theirs string
		code         int
		stderr       []string
		file         string
	}{
		{"the edit is made on the writer's bytes", "CB_S2_A=\"1\"\nCB_S2_B=\"0\"\nW_1=\"1\"\n", exitOK,
			[]string{"raced: another writer replaced", "put back", "the same edit was made on it"}, "CB_S2_A=\"1\"\nCB_S2_B=\"1\"\nW_1=\"1\"\n"},
		{"the writer ticked it itself", "CB_S2_A=\"1\"\nCB_S2_B=\"1\"\nW_1=\"1\"\n", exitRefused,
			[]string{"refused: not applied", `CB_S2_B is now "1", not "0" as planned`}, "CB_S2_A=\"1\"\nCB_S2_B=\"1\"\nW_1=\"1\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, e := actionRun(t)
			checklist := filepath.Join(dir, "checklist.state.env")
			landed := false
			e.actionSeams.BeforeRename = func() {
				if !landed {
					landed = true
					os.WriteFile(checklist+".tmp", []byte(tc.theirs), 0o644)
					os.Rename(checklist+".tmp", checklist)
				}
			}
			code, _, errOut := runCmd(e, "check", dir, "CB_S2_B", "--yes")
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q does not say %q", errOut, want)
				}
			}
			if got, _ := os.ReadFile(checklist); string(got) != tc.file {
				t.Errorf("checklist holds %q, want %q", got, tc.file)
			}
		})
	}
}
