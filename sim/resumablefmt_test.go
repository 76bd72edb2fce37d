package sim

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLockPIDReadsBothLockStyles(t *testing.T) {
	cases := map[string]int{
		`{"acquired_at_utc": "2026-02-15T14:37:31Z", "host": "h", "pid": 3215861, "run_id": "r", "user": "u"}` + "\n": 3215861,
		"acquired_at_utc=\"2026-02-15T14:37:31Z\"\nhost=\"h\"\npid=\"2998436\"\nrun_id=\"r\"\n":                       2998436,
		`{"agent_id": "x", "files": []}`: 0,
		"not a lock":                     0,
		`{"pid": "abc"}`:                 0,
	}
	for raw, want := range cases {
		if got := lockPID([]byte(raw)); got != want {
			t.Errorf("lockPID(%q) = %d, want %d", raw, got, want)
		}
	}
}

// The simulator re-reads env files before every invocation, so what it writes must read back unchanged,
// escapes included, and so must the hand-edited styles a person might leave (unquoted, comments).
func TestEnvFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.env")
	kv := map[string]string{"B": `has "quotes" and \ backslash`, "A": "", "C_DONE": "1", "PATH_LIKE": "$HOME/x"}
	if err := writeEnvFile(path, kv); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "A=\"\"\nB=\"has \\\"quotes\\\" and \\\\ backslash\"\nC_DONE=\"1\"\nPATH_LIKE=\"$HOME/x\"\n"
	if string(data) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", data, want)
	}
	back, err := readEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range kv {
		if back[k] != v {
			t.Errorf("%s read back as %q, want %q", k, back[k], v)
		}
	}
	hand := "# template\nCURRENT_STAGE=S1\n\nnot a pair\nS1_DONE = \"0\"\nS1_DONE=\"1\"\n"
	if err := os.WriteFile(path, []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err = readEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back["CURRENT_STAGE"] != "S1" || back["S1_DONE"] != "1" || len(back) != 2 {
		t.Errorf("hand-written file read as %v", back)
	}
}
