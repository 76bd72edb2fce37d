package remote

import (
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The pipe from a stream's ssh holds 1 MiB, not 64 KiB, so ssh writes a host's first runs in few pieces.
func TestStreamStdoutHoldsAMebibyte(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("true")
	stdout, err := streamStdout(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	raw, err := stdout.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	if err := raw.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if size < streamPipeBytes {
		t.Fatalf("the stream's pipe holds %d bytes, want %d", size, streamPipeBytes)
	}
}
