// Package resumabletest gives tests a private copy of the Convention B fixtures (testdata/opencode) with
// what is only known at test time filled in: this host's name, a pid that is certainly dead, and helpers for
// a lock held by a live process.
package resumabletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// HostPlaceholder stands for this machine's host name in fixture files.
const HostPlaceholder = "@THIS_HOST@"

// Fixture run folders under reports/.
const (
	IRM      = "irm-id-full-backfill-20260215T014733Z"
	Mining   = "iso26262-mining-20260215T143525Z"
	Sphinx   = "sphinx-traceability-migration-20260214T184350Z"
	Archived = "irm-id-full-backfill-20260215T215421Z.reset-20260215T221903Z"
	Broken   = "broken-state-20260216T000000Z"
	Export   = "export-style-20260216T010000Z"
)

// Source returns the path of testdata/opencode in the source tree.
func Source() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "opencode")
}

// Copy copies testdata/opencode into a fresh temp dir and returns the copy's root (the
// $OPENCODE_CONFIG_DIR). The host placeholder becomes this host's name, and the mining run's lock gets a pid
// that was just reaped, so it is stale by the pid rule on every machine.
func Copy(t testing.TB) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatalf("hostname: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "opencode")
	copyTree(t, Source(), dst, func(data []byte) []byte {
		return bytes.ReplaceAll(data, []byte(HostPlaceholder), []byte(host))
	})
	lock := filepath.Join(dst, "reports", Mining, "lock", "active.lock")
	WriteJSONLock(t, lock, DeadPID(t), host, time.Date(2026, 2, 15, 14, 37, 31, 0, time.UTC))
	return dst
}

// CopyDir copies the tree at src to dst verbatim (files 0644, folders 0755).
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	copyTree(t, src, dst, func(b []byte) []byte { return b })
}

func copyTree(t testing.TB, src, dst string, transform func([]byte) []byte) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, transform(data), 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// Run returns the path of a fixture run folder inside a copy made by Copy.
func Run(root, name string) string { return filepath.Join(root, "reports", name) }

// DeadPID returns the pid of a child that has exited and been reaped.
func DeadPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	return cmd.Process.Pid
}

// LivePID starts a child that sleeps until the test ends and returns its pid.
func LivePID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// WriteJSONLock writes a lock in the mining tool's format (one JSON line, sorted keys).
func WriteJSONLock(t testing.TB, path string, pid int, host string, acquired time.Time) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{
		"acquired_at_utc": acquired.UTC().Format(time.RFC3339), "host": host, "pid": pid,
		"run_id": "20260215T143525Z", "user": "u",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(payload, '\n'), 0o644); err != nil {
		t.Fatalf("write lock: %v", err)
	}
}

// WriteEnvLock writes a lock in the env style seen in shell-driven runs.
func WriteEnvLock(t testing.TB, path string, pid int, host string, acquired time.Time) {
	t.Helper()
	body := fmt.Sprintf("acquired_at_utc=%q\nhost=%q\npid=\"%d\"\nrun_id=\"r\"\nuser=\"u\"\n",
		acquired.UTC().Format(time.RFC3339), host, pid)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatalf("write lock: %v", err)
	}
}

// MinimalRun writes the smallest resumable run under root/name and returns its folder: stage S1 of two,
// S1's checklist item ticked and S2's not (so `step` may complete S1), a LOCK_FILE of run.lock (not
// written), and a one-line run.log.
func MinimalRun(t testing.TB, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(file, body string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("state.env", fmt.Sprintf("CURRENT_STAGE=\"S1\"\nLOCK_FILE=\"%s/run.lock\"\nRUN_ID=\"%s\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\nTASK_NAME=\"t\"\n", dir, name))
	write("checklist.state.env", "CB_S1_A=\"1\"\nCB_S2_B=\"0\"\nCHECKLIST_SCHEMA_VERSION=\"1\"\n")
	write("run.log", "[2026-12-01T08:00:00Z] run_bootstrap mode=kickoff-new\n")
	return dir
}
