// Package atomicfile writes run files so that a reader (or a crash) only ever sees the old bytes or the new
// bytes, never a torn mix; so that a write never lands outside the run root, whatever is swapped in between
// plan and apply; so that no planted FIFO can hang it; and so that a concurrent writer's change is detected
// instead of silently overwritten.
//
// Every operation goes through a Root: the run root opened once (at plan time) and held until the action is
// done. Names below it are resolved from that descriptor, on Linux with openat2(RESOLVE_BENEATH|
// RESOLVE_NO_SYMLINKS), elsewhere (or where the kernel lacks openat2) component by component with
// O_NOFOLLOW, so a folder swapped for a symlink, or a root renamed away, cannot redirect a write. Go's
// os.Root does not serve here: it follows symlinks that stay inside the root, has no exchanging rename, and
// gives no descriptor for the directory.
//
// Replace is temp file in the same directory → write → keep mode → fsync → precondition check → swap
// (Linux's RENAME_EXCHANGE, macOS's RENAME_SWAP; a plain rename elsewhere) → check of the bytes it displaced
// → directory fsync. Nothing becomes visible before the precondition holds, so a refused write is never seen
// by anyone. A writer that takes no lock can still land its own rename between the check and ours; the swap
// hands back what we displaced, and Replace reports those bytes (Displaced) so the caller can say exactly
// what was overwritten and keep it for undo (CanReportDisplaced: not where only a plain rename exists).
// Append is for run.log, which is never replaced because its writers keep appending to the inode they
// opened.
//
// This file holds the file operations (Read, Check, Replace, CreateExclusive, Append, RemoveIfUnchanged) and
// their errors; root.go the root handle and the resolution of names beneath it; temp.go the names of temp
// and quarantine files and their leftovers. The platform halves: resolve_openat2.go (Linux) and
// resolve_walk.go (elsewhere), swap_linux.go, swap_darwin.go and swap_other.go. The build tag portable
// forces the other halves on Linux, so `go test -tags portable` tests them here.
package atomicfile

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"runwatch/state/safefile"
)

// MaxFileBytes caps what Read loads: state files are small, and a huge one is a sign of something wrong.
const MaxFileBytes = 8 << 20

// Snapshot is what the user saw of a file: the precondition of a write.
type Snapshot struct {
	Path    string
	Exists  bool
	Size    int64
	ModTime time.Time
	Mode    fs.FileMode
	SHA256  string // hex
}

// Hash returns the hex SHA-256 of data.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ChangedError reports that a file no longer holds what the user saw. Nothing was written.
type ChangedError struct {
	Path   string
	Detail string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed on disk since you looked (%s); nothing was written", e.Path, e.Detail)
}

// ErrChanged matches every *ChangedError with errors.Is.
var ErrChanged = errors.New("changed on disk since you looked")

// Is lets errors.Is(err, ErrChanged) work.
func (e *ChangedError) Is(target error) bool { return target == ErrChanged }

// UnsafePathError is a refusal to write somewhere the safety model forbids (outside the run root, through a
// link, not a regular file, not ours).
type UnsafePathError struct {
	Path   string
	Reason string
}

func (e *UnsafePathError) Error() string {
	return fmt.Sprintf("refusing to write %s: %s", e.Path, e.Reason)
}

// NotRegularError refuses a FIFO, device, socket or directory where a run file should be.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; runwatch reads and writes only regular files", e.Path, safefile.Describe(e.Mode))
}

// CheckFile refuses a path that exists and is not a regular file of ours with one link (appends and
// replacements of such files would write somewhere else too, or block). A missing file passes.
func (r *Root) CheckFile(path string, checkOwner, singleLink bool) error {
	info, err := r.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkInfo(path, info, checkOwner, singleLink)
}

func checkInfo(path string, info Info, checkOwner, singleLink bool) error {
	if !info.Mode.IsRegular() {
		return &NotRegularError{Path: path, Mode: info.Mode}
	}
	if singleLink && info.Nlink > 1 {
		return &UnsafePathError{Path: path, Reason: fmt.Sprintf("it has %d hard links, so appending to it would also write to the other name(s), which may lie outside the run root; remove the extra link first", info.Nlink)}
	}
	if checkOwner {
		if uid := os.Getuid(); int(info.UID) != uid {
			return &UnsafePathError{Path: path, Reason: fmt.Sprintf("it is owned by uid %d, not by you (uid %d); use --force to override", info.UID, uid)}
		}
	}
	return nil
}

// Read returns a file's bytes and the snapshot that a later Replace checks against. A missing file gives
// Exists=false and no error, so "the file must still be absent" is a precondition too. The open is
// non-blocking and refuses anything but a regular file.
func (r *Root) Read(path string) ([]byte, Snapshot, error) {
	snap := Snapshot{Path: path}
	rel, err := r.Rel(path)
	if err != nil {
		return nil, snap, err
	}
	f, err := r.openRel(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, snap, nil
	}
	if err != nil {
		return nil, snap, err
	}
	defer f.Close()
	return readOpen(f, path, snap)
}

// OpenRead opens a regular file beneath the root for reading, non-blocking and without following links.
func (r *Root) OpenRead(path string) (*os.File, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return nil, err
	}
	f, err := r.openRel(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := fstat(f)
	if err == nil && !info.Mode.IsRegular() {
		err = &NotRegularError{Path: path, Mode: info.Mode}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readOpen(f *os.File, path string, snap Snapshot) ([]byte, Snapshot, error) {
	info, err := fstat(f)
	if err != nil {
		return nil, snap, err
	}
	if !info.Mode.IsRegular() {
		return nil, snap, &NotRegularError{Path: path, Mode: info.Mode}
	}
	if info.Size > MaxFileBytes {
		return nil, snap, fmt.Errorf("%s is %d bytes, more than the %d a state file may have", path, info.Size, MaxFileBytes)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileBytes+1)); err != nil {
		return nil, snap, fmt.Errorf("read %s: %w", path, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > MaxFileBytes {
		return nil, snap, fmt.Errorf("%s grew past %d bytes while being read", path, MaxFileBytes)
	}
	snap.Exists = true
	snap.Size = int64(len(data))
	snap.ModTime = info.MTime
	snap.Mode = info.Mode.Perm()
	snap.SHA256 = Hash(data)
	return data, snap, nil
}

// Check re-reads want.Path and reports a *ChangedError unless it still matches want. The hash decides; size
// and mtime are reported to say what moved.
func (r *Root) Check(want Snapshot) error {
	_, got, err := r.Read(want.Path)
	if err != nil {
		var u *UnsafePathError
		var nr *NotRegularError
		if errors.As(err, &u) || errors.As(err, &nr) {
			return err
		}
		return &ChangedError{Path: want.Path, Detail: "cannot re-read it: " + err.Error()}
	}
	return compare(want, got)
}

func compare(want, got Snapshot) error {
	switch {
	case want.Exists && !got.Exists:
		return &ChangedError{Path: want.Path, Detail: "it was removed"}
	case !want.Exists && got.Exists:
		return &ChangedError{Path: want.Path, Detail: "it was created"}
	case !want.Exists:
		return nil
	case got.SHA256 != want.SHA256:
		detail := "its content differs"
		if got.Size != want.Size {
			detail = fmt.Sprintf("size %d, was %d", got.Size, want.Size)
		} else if !got.ModTime.Equal(want.ModTime) {
			detail = "modified at " + got.ModTime.UTC().Format(time.RFC3339Nano)
		}
		return &ChangedError{Path: want.Path, Detail: detail}
	}
	return nil
}

// Displaced is what a Replace overwrote that was not what the user saw: a writer that takes no lock renamed
// its own file over the target between the last check and our rename. The bytes are handed back so the
// caller can say what was overwritten and keep them for undo.
type Displaced struct {
	Path   string
	Data   []byte
	SHA256 string
}

// TestHookBeforeRename, when set (by tests only, this package's and state/action's), runs between the
// precondition check and the rename, to play a writer that lands exactly there.
var TestHookBeforeRename func()

// Replace atomically replaces want.Path with data, if and only if the file still matches want (a file that
// did not exist must still not exist); tmpName (NewTempName) is the temp file's name beside it. The file mode
// is kept. On any failure before the rename the temp file is removed and the target is untouched: nothing of
// a refused write was ever visible. A non-nil Displaced means the write happened but replaced bytes that
// appeared after the last check.
func (r *Root) Replace(want Snapshot, data []byte, tmpName string) (*Displaced, error) {
	path := want.Path
	d, base, err := r.dir(path)
	if err != nil {
		return nil, err
	}
	defer d.release()
	mode := want.Mode
	if !want.Exists || mode == 0 {
		mode = 0o644
	}
	fd, err := unix.Openat(d.fd, tmpName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create temp file beside %s: %w", path, err)
	}
	tmp := os.NewFile(uintptr(fd), tmpName)
	published := false
	defer func() {
		if !published {
			tmp.Close()
			unix.Unlinkat(d.fd, tmpName, 0)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return nil, fmt.Errorf("write temp file for %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return nil, fmt.Errorf("keep mode of %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("fsync temp file for %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("close temp file for %s: %w", path, err)
	}
	if err := r.Check(want); err != nil {
		return nil, err
	}
	if TestHookBeforeRename != nil {
		TestHookBeforeRename()
	}
	if !want.Exists {
		// Link fails if the name appeared meanwhile, which rename would silently overwrite.
		if err := unix.Linkat(d.fd, tmpName, d.fd, base, 0); err != nil {
			if errors.Is(err, unix.EEXIST) {
				return nil, &ChangedError{Path: path, Detail: "it was created"}
			}
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		published = true
		unix.Unlinkat(d.fd, tmpName, 0)
		return nil, syncFD(d.fd, path)
	}
	displaced, err := r.exchange(d, tmpName, base, want)
	if err != nil {
		return nil, err
	}
	published = true
	return displaced, syncFD(d.fd, path)
}

// exchange puts the temp file in place by swapping it with the target (swap, per platform), which leaves the
// replaced file at the temp name, and reports the replaced bytes when they are not the ones checked. They are
// never swapped back: our file has been visible since the rename, and a writer may already have read it.
// Where no swap is possible (CanReportDisplaced, or a filesystem without one) a plain rename is used: then a
// write between check and rename cannot be seen; the window is microseconds wide.
func (r *Root) exchange(d dirFD, tmpName, base string, want Snapshot) (*Displaced, error) {
	swapped, err := swap(d, tmpName, base)
	if !swapped && err == nil {
		if err := unix.Renameat(d.fd, tmpName, d.fd, base); err != nil {
			return nil, fmt.Errorf("rename temp file over %s: %w", want.Path, err)
		}
		return nil, nil
	}
	if errors.Is(err, unix.ENOENT) {
		return nil, &ChangedError{Path: want.Path, Detail: "it was removed"}
	}
	if err != nil {
		return nil, fmt.Errorf("rename temp file over %s: %w", want.Path, err)
	}
	defer unix.Unlinkat(d.fd, tmpName, 0)
	fd, err := unix.Openat(d.fd, tmpName, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &Displaced{Path: want.Path}, nil
	}
	f := os.NewFile(uintptr(fd), tmpName)
	defer f.Close()
	data, got, err := readOpen(f, want.Path, Snapshot{Path: want.Path})
	if err != nil {
		return &Displaced{Path: want.Path}, nil
	}
	if got.SHA256 == want.SHA256 {
		return nil, nil
	}
	// A writer that writes in place (truncate, then write) may still be writing into the inode we displaced:
	// read it again until two reads a moment apart agree, so the bytes kept for undo are its whole write.
	for range 10 {
		time.Sleep(2 * time.Millisecond)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			break
		}
		again, _, err := readOpen(f, want.Path, Snapshot{Path: want.Path})
		if err != nil || bytes.Equal(again, data) {
			break
		}
		data = again
	}
	return &Displaced{Path: want.Path, Data: data, SHA256: Hash(data)}, nil
}

func syncFD(fd int, path string) error {
	if err := unix.Fsync(fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("fsync the folder of %s: %w", path, err)
	}
	return nil
}

// CreateExclusive creates path holding data, complete from the instant the name exists: data goes to a temp
// file (tmpName) that is then link(2)ed to path, which fails if path exists. It reports fs.ErrExist then.
func (r *Root) CreateExclusive(path string, data []byte, tmpName string) error {
	d, base, err := r.dir(path)
	if err != nil {
		return err
	}
	defer d.release()
	fd, err := unix.Openat(d.fd, tmpName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("create temp file beside %s: %w", path, err)
	}
	defer unix.Unlinkat(d.fd, tmpName, 0)
	f := os.NewFile(uintptr(fd), tmpName)
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := unix.Linkat(d.fd, tmpName, d.fd, base, 0); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
		}
		return r.pathErr("create", path, err)
	}
	return nil
}

// Append writes line to the end of path with O_APPEND, so it lands after whatever another writer appended,
// and never replaces the file. The file is created (mode 0644) when missing. The open is non-blocking; a
// FIFO, device, link or a file with more than one hard link (the other name may be anywhere) is refused.
func (r *Root) Append(path string, line []byte, checkOwner bool) error {
	rel, err := r.Rel(path)
	if err != nil {
		return err
	}
	f, err := r.openRel(rel, unix.O_WRONLY|unix.O_APPEND|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = r.openRel(rel, unix.O_WRONLY|unix.O_APPEND|unix.O_NONBLOCK|unix.O_CREAT|unix.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			f, err = r.openRel(rel, unix.O_WRONLY|unix.O_APPEND|unix.O_NONBLOCK, 0)
		}
	}
	if errors.Is(err, unix.ENXIO) {
		return &NotRegularError{Path: path, Mode: fs.ModeNamedPipe} // a FIFO nobody reads
	}
	if err != nil {
		return fmt.Errorf("open %s for append: %w", path, err)
	}
	defer f.Close()
	info, err := fstat(f)
	if err != nil {
		return err
	}
	if err := checkInfo(path, info, checkOwner, true); err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

// RemoveIfUnchanged removes want.Path only if it still holds the bytes that were judged. It claims the file
// first by renaming it to claimName (NewClaimName), so of several removers only one wins and a file swapped
// in meanwhile is never the one removed; if the claimed bytes are not the judged ones they are put back with
// a hard link (which fails rather than overwrite a file created at the old name since). beforeRemove runs
// after the claim is verified and before the bytes are gone (the resumable convention logs the payload
// first); if it fails, the file is put back too.
func (r *Root) RemoveIfUnchanged(want Snapshot, claimName string, beforeRemove func() error) error {
	path := want.Path
	if !want.Exists {
		return &ChangedError{Path: path, Detail: "it did not exist when judged"}
	}
	d, base, err := r.dir(path)
	if err != nil {
		return err
	}
	defer d.release()
	if err := unix.Renameat(d.fd, base, d.fd, claimName); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return &ChangedError{Path: path, Detail: "it was removed by someone else"}
		}
		return fmt.Errorf("claim %s: %w", path, err)
	}
	quarantine := filepath.Join(filepath.Dir(path), claimName)
	putBack := func(cause error) error {
		if err := unix.Linkat(d.fd, claimName, d.fd, base, 0); err != nil {
			return fmt.Errorf("%w; and putting it back failed (%v): the claimed bytes are in %s", cause, err, quarantine)
		}
		unix.Unlinkat(d.fd, claimName, 0)
		unix.Fsync(d.fd)
		return cause
	}
	fd, err := unix.Openat(d.fd, claimName, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return putBack(fmt.Errorf("read claimed %s: %w", path, err))
	}
	f := os.NewFile(uintptr(fd), quarantine)
	_, got, err := readOpen(f, path, Snapshot{Path: path})
	f.Close()
	if err != nil {
		return putBack(fmt.Errorf("read claimed %s: %w", path, err))
	}
	if got.SHA256 != want.SHA256 {
		return putBack(&ChangedError{Path: path, Detail: "its content differs from what was judged; put back"})
	}
	if beforeRemove != nil {
		if err := beforeRemove(); err != nil {
			return putBack(err)
		}
	}
	if err := unix.Unlinkat(d.fd, claimName, 0); err != nil {
		return fmt.Errorf("remove claimed %s (%s): %w", path, quarantine, err)
	}
	return syncFD(d.fd, path)
}

func randomSuffix() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// SyncDir fsyncs a directory so a rename, create or remove in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
