// Package atomicfile writes run files so that a reader (or a crash) only ever sees the old bytes or the new
// bytes, never a torn mix, and so that a concurrent writer's change is detected instead of overwritten.
//
// Replace is temp file in the same directory → write → keep mode → fsync → precondition check → rename →
// directory fsync. The precondition (size, mtime and SHA-256 of the bytes the user saw) is re-checked after
// the temp file is durable and just before the rename, which leaves the smallest window we can get without a
// lock the other writers honour. Append is for run.log, which is never replaced because its writers keep
// appending to the inode they opened.
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
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// UnsafePathError is a refusal to write somewhere the safety model forbids (outside the run root, not ours).
type UnsafePathError struct {
	Path   string
	Reason string
}

func (e *UnsafePathError) Error() string {
	return fmt.Sprintf("refusing to write %s: %s", e.Path, e.Reason)
}

// Read returns a file's bytes and the snapshot that a later Replace checks against. A missing file gives
// Exists=false and no error, so "the file must still be absent" is a precondition too.
func Read(path string) ([]byte, Snapshot, error) {
	snap := Snapshot{Path: path}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, snap, nil
	}
	if err != nil {
		return nil, snap, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, snap, err
	}
	if !fi.Mode().IsRegular() {
		return nil, snap, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > MaxFileBytes {
		return nil, snap, fmt.Errorf("%s is %d bytes, more than the %d a state file may have", path, fi.Size(), MaxFileBytes)
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
	snap.ModTime = fi.ModTime()
	snap.Mode = fi.Mode().Perm()
	snap.SHA256 = Hash(data)
	return data, snap, nil
}

// Check re-reads path and reports a *ChangedError unless it still matches want. The hash decides; size and
// mtime are reported to say what moved.
func Check(want Snapshot) error {
	_, got, err := Read(want.Path)
	if err != nil {
		return &ChangedError{Path: want.Path, Detail: "cannot re-read it: " + err.Error()}
	}
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

// TempPrefix is the name prefix of Replace's temp files for base. Watchers ignore `.<base>.tmp-*`.
func TempPrefix(base string) string { return "." + base + ".tmp-" }

// IsTemp reports whether name is one of our temp files (of any base).
func IsTemp(name string) bool { return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") }

// Replace atomically replaces want.Path with data, if and only if the file still matches want (a file that
// did not exist must still not exist). The file mode is kept. On any failure the temp file is removed and
// the target is untouched.
func Replace(want Snapshot, data []byte) error {
	path := want.Path
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := want.Mode
	if !want.Exists || mode == 0 {
		mode = 0o644
	}
	tmp, err := os.CreateTemp(dir, TempPrefix(base)+"*")
	if err != nil {
		return fmt.Errorf("create temp file beside %s: %w", path, err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write temp file for %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("keep mode of %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync temp file for %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close temp file for %s: %w", path, err)
	}
	if err := Check(want); err != nil {
		return err
	}
	if !want.Exists {
		// Link fails if the name appeared meanwhile, which rename would silently overwrite.
		if err := os.Link(tmpName, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return &ChangedError{Path: path, Detail: "it was created"}
			}
			return fmt.Errorf("create %s: %w", path, err)
		}
		os.Remove(tmpName)
	} else {
		if testHookBeforeRename != nil {
			testHookBeforeRename()
		}
		swapped, err := exchange(tmpName, path, want, data)
		ok = swapped // after a swap the temp name holds the replaced file: exchange decides its fate
		if err != nil {
			return err
		}
	}
	ok = true
	removeStaleTemps(dir, base)
	return SyncDir(dir)
}

// staleTempAge is how old a temp file of ours must be before it is taken for the leftover of a killed
// writer: far longer than any write takes.
const staleTempAge = 10 * time.Minute

// removeStaleTemps deletes temp files that a writer killed mid-write left beside base. Readers never take
// them for state (they are hidden and named .<base>.tmp-*), but they should not pile up.
func removeStaleTemps(dir, base string) {
	matches, _ := filepath.Glob(filepath.Join(dir, TempPrefix(globEscape(base))+"*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTempAge {
			os.Remove(m)
		}
	}
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// testHookBeforeRename lets tests write the target between the precondition check and the rename.
var testHookBeforeRename func()

// exchange puts the temp file in place with RENAME_EXCHANGE, which leaves the replaced file at the temp name.
// Checking those replaced bytes closes the last window between Check and the rename: if a writer that takes
// no lock renamed its own file in meanwhile, we swap theirs back and report the conflict instead of losing
// their update. Filesystems without RENAME_EXCHANGE get a plain rename (the window stays, microseconds wide).
func exchange(tmpName, path string, want Snapshot, data []byte) (swapped bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, tmpName, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		if err := os.Rename(tmpName, path); err != nil {
			return false, fmt.Errorf("rename temp file over %s: %w", path, err)
		}
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, &ChangedError{Path: path, Detail: "it was removed"}
	}
	if err != nil {
		return false, fmt.Errorf("rename temp file over %s: %w", path, err)
	}
	_, replaced, rerr := Read(tmpName)
	if rerr == nil && replaced.SHA256 == want.SHA256 {
		os.Remove(tmpName)
		return true, nil
	}
	// Someone wrote between our check and our rename. Put their file back, unless they already replaced
	// ours too (then their newest bytes are in place and ours are simply gone: still a conflict to report).
	_, cur, _ := Read(path)
	if cur.Exists && cur.SHA256 == Hash(data) {
		if err := unix.Renameat2(unix.AT_FDCWD, tmpName, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err != nil {
			return true, fmt.Errorf("%s was written by someone else during our write, and putting theirs back failed (%v); their bytes are in %s", path, err, tmpName)
		}
	}
	os.Remove(tmpName)
	return true, &ChangedError{Path: path, Detail: "it was written by someone else during our write; theirs was kept"}
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

// Append writes line to the end of path with O_APPEND, so it lands after whatever another writer appended,
// and never replaces the file. The file is created (mode 0644) when missing.
func Append(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("open %s for append: %w", path, err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return f.Close()
}

// Resolve returns the real path that writing path would touch, refusing when a symlink (of the file or any
// directory above it) leads outside root. A path that does not exist yet is resolved through its directory.
func Resolve(root, path string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", &UnsafePathError{Path: path, Reason: "cannot resolve the run root " + root + ": " + err.Error()}
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", &UnsafePathError{Path: path, Reason: "it is a dangling symlink"}
		}
		var dir string
		dir, err = filepath.EvalSymlinks(filepath.Dir(path))
		real = filepath.Join(dir, filepath.Base(path))
	}
	if err != nil {
		return "", &UnsafePathError{Path: path, Reason: "cannot resolve it: " + err.Error()}
	}
	if !Within(realRoot, real) {
		return "", &UnsafePathError{Path: path, Reason: fmt.Sprintf("it leads to %s, outside the run root %s", real, realRoot)}
	}
	return real, nil
}

// Within reports whether path is root or lies below it (both already cleaned and resolved).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// CheckOwner refuses a file owned by another user: editing someone else's run is almost always a mistake.
func CheckOwner(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return &UnsafePathError{Path: path, Reason: fmt.Sprintf("it is owned by uid %d, not by you (uid %d); use --force to override", st.Uid, uid)}
	}
	return nil
}

// RemoveIfUnchanged removes want.Path only if it still holds the bytes that were judged. It claims the file
// first by renaming it to a unique quarantine name, so of several removers only one wins and a file swapped
// in meanwhile is never the one removed; if the claimed bytes are not the judged ones they are put back with
// a hard link (which fails rather than overwrite a file created at the old name since). beforeRemove runs
// after the claim is verified and before the bytes are gone (the resumable convention logs the payload
// first); if it fails, the file is put back too.
func RemoveIfUnchanged(want Snapshot, beforeRemove func() error) error {
	path := want.Path
	if !want.Exists {
		return &ChangedError{Path: path, Detail: "it did not exist when judged"}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	quarantine := filepath.Join(dir, "."+base+".claimed-"+randomSuffix())
	if err := os.Rename(path, quarantine); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &ChangedError{Path: path, Detail: "it was removed by someone else"}
		}
		return fmt.Errorf("claim %s: %w", path, err)
	}
	putBack := func(cause error) error {
		if err := os.Link(quarantine, path); err != nil {
			return fmt.Errorf("%w; and putting it back failed (%v): the claimed bytes are in %s", cause, err, quarantine)
		}
		os.Remove(quarantine)
		SyncDir(dir)
		return cause
	}
	_, got, err := Read(quarantine)
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
	if err := os.Remove(quarantine); err != nil {
		return fmt.Errorf("remove claimed %s (%s): %w", path, quarantine, err)
	}
	return SyncDir(dir)
}

func randomSuffix() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}
