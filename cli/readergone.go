package cli

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readerGone is closed when nobody reads out any more: out is a pipe, socket or terminal whose other end
// has gone. A command that writes only when something changes would otherwise learn it never: a remote
// `runwatch events` whose ssh connection dropped (sshd closes the session's pipes, and sends no signal to a
// session without a terminal) would wait on a quiet run root forever, one more process per reconnect.
// Closing done stops the watch.
func readerGone(out io.Writer, done <-chan struct{}) <-chan struct{} {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFCHR:
	default:
		return nil // a file or /dev/null: nobody to lose
	}
	gone := make(chan struct{})
	fd := int(f.Fd())
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// No events asked for: poll still reports POLLERR (a pipe whose reader closed) and POLLHUP (a
			// socket or terminal hung up), and nothing else. The timeout lets done end the loop.
			fds := []unix.PollFd{{Fd: int32(fd)}}
			n, err := unix.Poll(fds, int(time.Second/time.Millisecond))
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				close(gone)
				return
			}
		}
	}()
	return gone
}
