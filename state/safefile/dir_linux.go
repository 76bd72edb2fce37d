package safefile

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"syscall"
)

// readDir reads the folder's getdents records itself: an *os.File costs an fcntl to open a folder, and
// os.ReadDir an object an entry, for thousands of folders in a status.
func readDir(path string, n int) ([]DirEntry, error) {
	fd, err := openDirFD(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var buf [8192]byte
	var entries []DirEntry
	for len(entries) < n {
		got, err := syscall.ReadDirent(fd, buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return entries, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if got <= 0 {
			return entries, nil
		}
		if entries, err = appendDirents(entries, buf[:got], path, n); err != nil {
			return entries, err
		}
	}
	return entries, nil
}

// appendDirents appends the linux_dirent64 records of rec (d_ino, d_off, d_reclen, d_type, d_name NUL
// terminated) until entries holds n.
func appendDirents(entries []DirEntry, rec []byte, dir string, n int) ([]DirEntry, error) {
	const nameAt = 19
	for len(rec) >= nameAt && len(entries) < n {
		size := int(binary.NativeEndian.Uint16(rec[16:18]))
		if size < nameAt || size > len(rec) {
			break
		}
		ino, typ, name := binary.NativeEndian.Uint64(rec[:8]), rec[18], rec[nameAt:size]
		rec = rec[size:]
		if ino == 0 { // a deleted file's record, which os.ReadDir skips too
			continue
		}
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if string(name) == "." || string(name) == ".." {
			continue
		}
		t, known := direntType(typ)
		e := DirEntry{Name: string(name), Type: t}
		if !known {
			t, err := typeOf(dir, e.Name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return entries, err
			}
			e.Type = t
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func direntType(t uint8) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}
