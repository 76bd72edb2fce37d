//go:build linux

package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A journal that is a link to /proc/kmsg (readable by root, and a read of it waits for the kernel's next log
// line) is refused by every reader of the journal, naming it, instead of hanging undo and recovery.
func TestJournalOnProcKmsgIsRefused(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root may open /proc/kmsg, and only there would a read block: run as root (CI does)")
	}
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.Symlink("/proc/kmsg", path); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() error{
		"Read":         func() error { _, _, err := Read(path); return err },
		"FindUndoable": func() error { _, _, err := FindUndoable(path, "/r/state.env"); return err },
		"Has":          func() error { _, err := Has(path, "x"); return err },
		"BeganAppend":  func() error { _, err := BeganAppend(path, "x"); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- read() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "procfs") {
				t.Errorf("%s: %v, want a refusal naming %s", name, err, path)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s hangs on a journal that is /proc/kmsg", name)
		}
	}
}
