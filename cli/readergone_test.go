package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A `runwatch events` whose reader has gone stops, though nothing changes that it would write: over ssh the
// reader is the connection, and a remote events process that outlived its connection would wait on a quiet
// root forever (one more per reconnect).
func TestEventsStopsWhenItsReaderIsGone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	eventsRun(t, filepath.Join(root, "quiet-20260215T014733Z"), "S1")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	code := make(chan int, 1)
	go func() {
		code <- dispatch([]string{"events", root}, pw, io.Discard, testEnv(t))
		pw.Close()
	}()
	// Read up to its health line: it is watching now, and will write nothing more on its own.
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"type":"watch-health"`)) {
			break
		}
	}
	pr.Close()
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("events exited %d once its reader was gone, want %d", c, exitOK)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("events still runs 30 s after its reader closed the pipe")
	}
}

// A reader that stays keeps it running: a pipe with its reader open, or a plain file, is not "gone".
func TestReaderGoneOnlyForAClosedReader(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	done := make(chan struct{})
	defer close(done)
	gone := readerGone(pw, done)
	if gone == nil {
		t.Fatal("a pipe is not watched")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if readerGone(f, done) != nil {
		t.Fatal("a regular file is watched for a reader")
	}
	select {
	case <-gone:
		t.Fatal("gone while its reader is open")
	case <-time.After(1500 * time.Millisecond): // longer than one poll round
	}
	pr.Close()
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		t.Fatal("not gone 30 s after the reader closed")
	}
}
