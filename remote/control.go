package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"runwatch/userdir"
)

// The ControlMaster sockets carry every remote command: whoever can put a socket where ssh looks for one
// receives the commands and answers them. So the folder they live in must be ours alone, checked every time
// it is used (as ssh and tmux check theirs), and a socket in it that we did not make is never used.

// DefaultControlDir is $XDG_RUNTIME_DIR/runwatch (a folder the login session made private for the user),
// else runwatch-UID under the temp dir, which privateDir then checks is ours and 0700 before every use; in
// the environment getenv reads.
func DefaultControlDir(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "runwatch")
	}
	return filepath.Join(userdir.Temp(getenv), fmt.Sprintf("runwatch-%d", os.Geteuid()))
}

// privateDir makes dir (0700) when it is missing, and refuses it unless it is a real folder (not a link)
// owned by this user and closed to everyone else. A shared temp folder is where another user can make it
// first: that folder is refused with its owner named, never used.
func privateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("ssh control folder %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("ssh control folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("ssh control folder %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		return fmt.Errorf("ssh control folder %s is not a folder (%s): refusing it; remove it, or set XDG_RUNTIME_DIR", dir, fi.Mode().Type())
	case !ok:
		return fmt.Errorf("ssh control folder %s: cannot tell its owner: refusing it", dir)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("ssh control folder %s is owned by uid %d, not by you (uid %d): refusing it; "+
			"another user may have made it to receive your ssh commands; remove it, or set XDG_RUNTIME_DIR", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("ssh control folder %s has mode %04o, open to others: refusing it; chmod 700 it, or set XDG_RUNTIME_DIR",
			dir, fi.Mode().Perm())
	}
	return nil
}

// ownSocket checks what is at a control path before ssh is pointed at it: nothing, or a socket of ours.
func ownSocket(path string) (exists bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ssh control socket %s: %w", path, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSocket == 0:
		return true, fmt.Errorf("ssh control socket %s is not a socket (%s): refusing it; remove it", path, fi.Mode().Type())
	case !ok || int(st.Uid) != os.Geteuid():
		uid := -1
		if ok {
			uid = int(st.Uid)
		}
		return true, fmt.Errorf("ssh control socket %s is owned by uid %d, not by you (uid %d): refusing it; remove it", path, uid, os.Geteuid())
	}
	return true, nil
}
