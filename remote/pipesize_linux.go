package remote

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// streamPipeBytes is what the pipe from a host's ssh to this runwatch holds. At the default 64 KiB, ssh
// wrote a host's first runs (~8.5 KB a run) in pieces, woken for each read this side made: 0.27–0.30 s of
// its CPU for 1,000 runs against 0.11–0.17 s at 1 MiB (a reader of 256 KiB every 2 ms, loaded machine;
// issue 35). Linux lets anyone set a pipe up to /proc/sys/fs/pipe-max-size, 1 MiB unless raised.
const streamPipeBytes = 1 << 20

// growPipe makes the pipe r reads hold streamPipeBytes, if it is a pipe and the system lets it; best effort.
func growPipe(r io.Reader) {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, streamPipeBytes) })
}
