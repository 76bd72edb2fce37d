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
// hands back what we displaced, which is swapped straight back into place (Displaced.PutBack: the caller
// makes its edit again on the writer's bytes), or, when that cannot be done, reported so the caller can say
// exactly what was overwritten and keep it for undo (CanReportDisplaced: not where only a plain rename
// exists).
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

	"runwatch/plural"
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
		return &UnsafePathError{Path: path, Reason: fmt.Sprintf("it has %d hard links, so appending to it would also write to the other %s, which may lie outside the run root; remove the extra %s first",
			info.Nlink, plural.Word(int(info.Nlink-1), "name", "names"), plural.Word(int(info.Nlink-1), "link", "links"))}
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
	data, snap, _, err := r.readIno(path)
	return data, snap, err
}

// readIno is Read, also giving the inode number of the file read (0 when missing).
func (r *Root) readIno(path string) ([]byte, Snapshot, uint64, error) {
	snap := Snapshot{Path: path}
	rel, err := r.Rel(path)
	if err != nil {
		return nil, snap, 0, err
	}
	f, err := r.openRel(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, snap, 0, nil
	}
	if err != nil {
		return nil, snap, 0, err
	}
	defer f.Close()
	data, snap, err := readOpen(f, path, snap)
	return data, snap, inoOf(int(f.Fd())), err
}

// inoOf is the inode number of an open file (0 when it cannot be had).
func inoOf(fd int) uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Ino
}

// inoAt is the inode number of name in d, not following a link (0 when it cannot be had).
func inoAt(d dirFD, name string) uint64 {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return st.Ino
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
	_, err := r.check(want)
	return err
}

// check is Check, also giving the inode number of the file found holding the checked bytes.
func (r *Root) check(want Snapshot) (uint64, error) {
	_, got, ino, err := r.readIno(want.Path)
	if err != nil {
		var u *UnsafePathError
		var nr *NotRegularError
		if errors.As(err, &u) || errors.As(err, &nr) {
			return 0, err
		}
		return 0, &ChangedError{Path: want.Path, Detail: "cannot re-read it: " + err.Error()}
	}
	return ino, compare(want, got)
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

// Displaced is what a Replace found at the name instead of the bytes it checked: a writer that takes no lock
// renamed its own file over the target (or wrote into it) between the last check and our rename.
//
// PutBack says the writer's file was exchanged back into place at once (CAS: only when what came out was
// our own file, or the writer's newer one), so the write did not happen: the name holds the writer's bytes,
// ours were in place for Visible (microseconds), and the caller may redo its edit on what is there now. A
// put back that could not be done leaves PutBack false: our write stands, and Data is what it replaced, for
// the caller to report and keep for undo.
type Displaced struct {
	Path    string
	Data    []byte
	SHA256  string
	PutBack bool
	Visible time.Duration
}

// Replace atomically replaces want.Path with data, if and only if the file still matches want (a file that
// did not exist must still not exist); tmpName (NewTempName) is the temp file's name beside it. The file mode
// is kept. On any failure before the rename the temp file is removed and the target is untouched: nothing of
// a refused write was ever visible. A non-nil Displaced means bytes that appeared after the last check were
// found at the rename: put back (the write undone) or, when that failed, replaced.
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
	ours := inoOf(fd)
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("close temp file for %s: %w", path, err)
	}
	checked, err := r.check(want)
	if err != nil {
		return nil, err
	}
	if r.BeforeRename != nil {
		r.BeforeRename()
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
	displaced, err := r.exchange(d, tmpName, base, want, checked, fileID{ours, Hash(data)})
	if err != nil {
		return nil, err
	}
	published = true
	return displaced, syncFD(d.fd, path)
}

// fileID is how putBack knows a file that comes out of an exchange: its inode, and its bytes' hash when
// they must be the same too ("" when the inode is enough).
type fileID struct {
	ino uint64
	sum string
}

// exchange puts the temp file in place by swapping it with the target (swap, per platform), which leaves the
// replaced file at the temp name. When that is not the file checked (another inode: a rename landed; or
// other bytes: written in place), a writer landed between check and rename, and its file is swapped straight
// back (putBack): a rename is seen by its inode with one fstatat, so ours is in place for three system calls
// (microseconds), and a writer that reads again only after its own rename has landed (state_tool.py starts a
// process per update) does not see it. Keeping ours and making the edit again on the writer's bytes would
// leave the writer's update out of the file for the milliseconds that takes. Where no swap is possible
// (CanReportDisplaced, or a filesystem without one) a plain rename is used: then a write between check and
// rename cannot be seen; the window is microseconds wide.
func (r *Root) exchange(d dirFD, tmpName, base string, want Snapshot, checked uint64, ours fileID) (*Displaced, error) {
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
	in := time.Now()
	defer unix.Unlinkat(d.fd, tmpName, 0)
	tried := false
	if ino := inoAt(d, tmpName); checked != 0 && ino != 0 && ino != checked {
		tried = true
		if back := r.putBack(d, tmpName, base, want.Path, ours, ino, in); back != nil {
			return back, nil
		}
	}
	data, sum, err := readAt(d, tmpName, want.Path)
	if err != nil {
		return &Displaced{Path: want.Path}, nil
	}
	if sum == want.SHA256 {
		return nil, nil
	}
	if !tried {
		if back := r.putBack(d, tmpName, base, want.Path, ours, inoAt(d, tmpName), in); back != nil {
			return back, nil
		}
	}
	return &Displaced{Path: want.Path, Data: data, SHA256: sum}, nil
}

// putBack exchanges the writer's file (inode theirs, at tmpName) back to base, and checks that what came
// out is ours. If it is not, the writer renamed (or wrote into ours) a newer file while ours was in place:
// that one goes to the name in turn, up to a bound. It returns nil when the first exchange back fails: ours
// stays in place, and the caller reports what it replaced.
func (r *Root) putBack(d dirFD, tmpName, base, path string, ours fileID, theirs uint64, in time.Time) *Displaced {
	expect := ours
	for round := 0; ; round++ {
		if r.beforePutBack != nil {
			r.beforePutBack(round)
		}
		swapped, _ := swap(d, tmpName, base)
		if !swapped && round == 0 {
			return nil
		}
		visible := time.Since(in)
		if !swapped || round == 8 {
			// The writer's newest file is at tmpName and the name holds an older one of its own: the newest
			// goes to the name the plain way (the older file, which it superseded, goes).
			unix.Renameat(d.fd, tmpName, d.fd, base)
			return putBackDone(d, base, path, visible)
		}
		out := inoAt(d, tmpName)
		if out == expect.ino {
			if expect.sum == "" {
				return putBackDone(d, base, path, visible)
			}
			if _, sum, err := readAt(d, tmpName, path); err == nil && sum == expect.sum {
				return putBackDone(d, base, path, visible)
			}
		}
		// A newer file of the writer's came out (a rename, or a write into ours while it was in place): it
		// goes to the name, and the one just placed there must come out next.
		expect = fileID{ino: theirs}
		theirs = out
	}
}

// putBackDone describes a put back: the bytes now at the name (the writer's).
func putBackDone(d dirFD, base, path string, visible time.Duration) *Displaced {
	data, sum, _ := readAt(d, base, path)
	return &Displaced{Path: path, Data: data, SHA256: sum, PutBack: true, Visible: visible}
}

// readAt reads the file at name in d (a name of ours: the temp file) without following links or blocking.
func readAt(d dirFD, name, path string) ([]byte, string, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	data, got, err := readOpen(f, path, Snapshot{Path: path})
	if err != nil {
		return nil, "", err
	}
	return data, got.SHA256, nil
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
