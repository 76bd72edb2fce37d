// Package atomicfile writes run files so that a reader (or a crash) only ever sees the old bytes or the new
// bytes, never a torn mix; so that a write never lands outside the run root, whatever is swapped in between
// plan and apply; so that no planted FIFO can hang it; and so that a concurrent writer's change is detected
// instead of silently overwritten.
//
// Every operation goes through a Root: the run root opened once (at plan time) and held until the action is
// done. Names below it are resolved from that descriptor with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
// (or, where the kernel lacks openat2, component by component with O_NOFOLLOW), so a folder swapped for a
// symlink, or a root renamed away, cannot redirect a write. Go's os.Root does not serve here: it follows
// symlinks that stay inside the root, has no RENAME_EXCHANGE, and gives no descriptor for the directory.
//
// Replace is temp file in the same directory → write → keep mode → fsync → precondition check →
// rename(RENAME_EXCHANGE) → check of the bytes it displaced → directory fsync. Nothing becomes visible
// before the precondition holds, so a refused write is never seen by anyone. A writer that takes no lock can
// still land its own rename between the check and ours; the exchange hands back what we displaced, and
// Replace reports those bytes (Displaced) so the caller can say exactly what was overwritten and keep it for
// undo. Append is for run.log, which is never replaced because its writers keep appending to the inode they
// opened.
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// Root is a run root held open: every later name is resolved beneath this descriptor, never through a link.
type Root struct {
	f    *os.File
	path string
}

// OpenRoot opens the run root at path. Links in path itself are followed once, now: the root is what the
// person named; below it nothing is followed.
func OpenRoot(path string) (*Root, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, &UnsafePathError{Path: path, Reason: "cannot resolve the run root: " + err.Error()}
	}
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &UnsafePathError{Path: path, Reason: "cannot open the run root: " + err.Error()}
	}
	return &Root{f: os.NewFile(uintptr(fd), real), path: real}, nil
}

// Path is the root's real path as it was when opened.
func (r *Root) Path() string { return r.path }

// Close releases the root's descriptor.
func (r *Root) Close() error { return r.f.Close() }

// Rel is path relative to the root, refusing a path that is not below it. Paths are compared as written:
// callers pass real paths (Resolve).
func (r *Root) Rel(path string) (string, error) {
	rel, err := filepath.Rel(r.path, filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", &UnsafePathError{Path: path, Reason: "it is not inside the run root " + r.path}
	}
	return rel, nil
}

// noOpenat2 is set once openat2 turns out to be missing (old kernels, some sandboxes); tests set it to run
// the component walk.
var noOpenat2 atomic.Bool

// resolveFlags: stay beneath the root, follow no link of any kind.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openRel opens rel beneath the root without following any link. Every open carries O_NOFOLLOW and
// O_CLOEXEC; callers add O_NONBLOCK so a FIFO cannot block the open.
func (r *Root) openRel(rel string, flags int, mode uint32) (*os.File, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	full := filepath.Join(r.path, rel)
	if !noOpenat2.Load() {
		for range 16 {
			fd, err := unix.Openat2(int(r.f.Fd()), rel, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveFlags})
			switch {
			case err == nil:
				return os.NewFile(uintptr(fd), full), nil
			case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
				continue // EAGAIN: a rename raced the lookup; the kernel asks to retry
			case errors.Is(err, unix.ENOSYS):
				noOpenat2.Store(true)
			default:
				return nil, r.pathErr("open", full, err)
			}
			break
		}
	}
	dirRel, base := filepath.Split(rel)
	d, err := r.walk(dirRel)
	if err != nil {
		return nil, err
	}
	defer d.release()
	for {
		fd, err := unix.Openat(d.fd, base, flags, mode)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, r.pathErr("open", full, err)
		}
		return os.NewFile(uintptr(fd), full), nil
	}
}

// dirFD is a directory descriptor beneath the root; release closes it unless it is the root's own.
type dirFD struct {
	fd  int
	own *os.File
}

func (d dirFD) release() {
	if d.own != nil {
		d.own.Close()
	}
}

// walk opens the directory rel (may be "" for the root) one component at a time with O_NOFOLLOW.
func (r *Root) walk(rel string) (dirFD, error) {
	rel = strings.Trim(filepath.Clean("/"+rel), "/")
	cur := dirFD{fd: int(r.f.Fd())}
	if rel == "" {
		return cur, nil
	}
	sofar := r.path
	for _, c := range strings.Split(rel, "/") {
		sofar = filepath.Join(sofar, c)
		if c == ".." || c == "." {
			cur.release()
			return dirFD{}, &UnsafePathError{Path: sofar, Reason: "it climbs out of the run root"}
		}
		fd, err := unix.Openat(cur.fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		cur.release()
		if err != nil {
			return dirFD{}, r.pathErr("open", sofar, err)
		}
		cur = dirFD{fd: fd, own: os.NewFile(uintptr(fd), sofar)}
	}
	return cur, nil
}

// dir opens the directory holding path and returns it with path's base name.
func (r *Root) dir(path string) (dirFD, string, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return dirFD{}, "", err
	}
	dirRel, base := filepath.Split(rel)
	if dirRel == "" {
		return dirFD{fd: int(r.f.Fd())}, base, nil
	}
	f, err := r.openRel(strings.TrimSuffix(dirRel, "/"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return dirFD{}, "", err
	}
	return dirFD{fd: int(f.Fd()), own: f}, base, nil
}

// pathErr turns the errors of a link-refusing lookup into refusals a person can act on. Other errors keep
// their errno, so errors.Is(err, fs.ErrNotExist) works.
func (r *Root) pathErr(op, full string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return &UnsafePathError{Path: full, Reason: "a symlink lies on the way to it (a folder or the file itself was swapped for a link?); runwatch never follows links below the run root when writing"}
	case errors.Is(err, unix.EXDEV):
		return &UnsafePathError{Path: full, Reason: "it leads outside the run root " + r.path}
	case errors.Is(err, unix.ENOTDIR):
		return &UnsafePathError{Path: full, Reason: "a folder on the way to it is not a folder (a symlink or a file was put in its place?); runwatch never follows links below the run root when writing"}
	}
	return &fs.PathError{Op: op, Path: full, Err: err}
}

// NotRegularError refuses a FIFO, device, socket or directory where a run file should be.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; runwatch reads and writes only regular files", e.Path, safefile.Describe(e.Mode))
}

// Info is what Lstat tells of a name beneath the root.
type Info struct {
	Mode  fs.FileMode
	Nlink uint64
	UID   uint32
	Size  int64
	MTime time.Time
}

// Lstat describes path without opening it (so a FIFO cannot block) and without following a link.
func (r *Root) Lstat(path string) (Info, error) {
	d, base, err := r.dir(path)
	if err != nil {
		return Info{}, err
	}
	defer d.release()
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, r.pathErr("lstat", path, err)
	}
	return infoOf(&st), nil
}

func infoOf(st *unix.Stat_t) Info {
	return Info{Mode: modeOf(st.Mode), Nlink: uint64(st.Nlink), UID: st.Uid, Size: st.Size,
		MTime: time.Unix(st.Mtim.Unix())}
}

func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return mode
}

func fstat(f *os.File) (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Info{}, err
	}
	return infoOf(&st), nil
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

// Temp and quarantine files carry their owner in their name, .<base>.tmp-runwatch-<host>-<pid>-<random> and
// .<base>.claimed-runwatch-<host>-<pid>-<random> (host: a short hash of the host name), so the next action on
// the run can tell a dead writer's leftover from a live writer's file in flight.
const (
	tmpMark     = ".tmp-"
	claimedMark = ".claimed-"
	ownerTag    = "runwatch-"
)

// TempPrefix is the name prefix of every temp file for base. Watchers ignore `.<base>.tmp-*`.
func TempPrefix(base string) string { return "." + base + tmpMark }

// IsTemp reports whether name is one of our temp or quarantine files (of any base).
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && (strings.Contains(name, tmpMark) || strings.Contains(name, claimedMark))
}

var (
	hostTagOnce sync.Once
	hostTagVal  string
)

// HostTag is the short, name-safe tag of this host used in owner-named files.
func HostTag() string {
	hostTagOnce.Do(func() {
		h, _ := os.Hostname()
		hostTagVal = Hash([]byte(h))[:8]
	})
	return hostTagVal
}

func ownerPart() string {
	return ownerTag + HostTag() + "-" + strconv.Itoa(os.Getpid()) + "-" + randomSuffix()
}

// NewTempName is a fresh temp name for base, owned by this process.
func NewTempName(base string) string { return TempPrefix(base) + ownerPart() }

// NewClaimName is a fresh quarantine name for base, owned by this process.
func NewClaimName(base string) string { return "." + base + claimedMark + ownerPart() }

// Leftover is a temp or quarantine file found beside a run file.
type Leftover struct {
	Name string
	// Base is the file it belongs to; Claimed says it is a quarantined (claimed) copy of Base.
	Base    string
	Claimed bool
	// Ours: named by runwatch with an owner; Host/PID are that owner. Legacy names have no owner.
	Ours    bool
	Host    string
	PID     int
	ModTime time.Time
}

// ParseLeftover recognises our temp and quarantine names.
func ParseLeftover(name string) (Leftover, bool) {
	if !strings.HasPrefix(name, ".") {
		return Leftover{}, false
	}
	l := Leftover{Name: name}
	var rest string
	if i := strings.LastIndex(name, claimedMark); i > 0 {
		l.Base, rest, l.Claimed = name[1:i], name[i+len(claimedMark):], true
	} else if i := strings.LastIndex(name, tmpMark); i > 0 {
		l.Base, rest = name[1:i], name[i+len(tmpMark):]
	} else {
		return Leftover{}, false
	}
	if l.Base == "" {
		return Leftover{}, false
	}
	if owner, ok := strings.CutPrefix(rest, ownerTag); ok {
		parts := strings.Split(owner, "-")
		if len(parts) == 3 {
			if pid, err := strconv.Atoi(parts[1]); err == nil && pid > 0 {
				l.Ours, l.Host, l.PID = true, parts[0], pid
			}
		}
	}
	return l, true
}

// legacyLeftoverAge is how old a temp file without an owner in its name (older runwatch versions) must be
// before it is taken for the leftover of a killed writer: far longer than any write takes.
const legacyLeftoverAge = 10 * time.Minute

// Leftovers lists the temp and quarantine files in the directory of path (path itself need not exist).
func (r *Root) Leftovers(path string) ([]Leftover, error) {
	d, _, err := r.dir(path)
	if err != nil {
		return nil, err
	}
	defer d.release()
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, r.pathErr("open", filepath.Dir(path), err)
	}
	f := os.NewFile(uintptr(fd), filepath.Dir(path))
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, n := range names {
		l, ok := ParseLeftover(n)
		if !ok {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(d.fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		l.ModTime = time.Unix(st.Mtim.Unix())
		out = append(out, l)
	}
	return out, nil
}

// DeadOwner says whether a leftover's owner is gone: ours on this host with a dead pid (or a pid reused
// since the file was written), or an ownerless legacy name older than any write takes. alive reports a pid's
// liveness and, when known, its start time.
func (l Leftover) DeadOwner(now time.Time, alive func(pid int) (bool, time.Time)) bool {
	if !l.Ours {
		return now.Sub(l.ModTime) > legacyLeftoverAge
	}
	if l.Host != HostTag() {
		return false // another host's writer: its liveness cannot be checked here
	}
	ok, started := alive(l.PID)
	return !ok || !started.IsZero() && started.After(l.ModTime.Add(time.Second))
}

// CleanLeftover removes a dead owner's leftover beside path's directory. A quarantined copy whose original
// name is free is put back (a claim that was never finished must not lose the file); otherwise it is a copy
// nobody sees, and goes. It reports what it did.
func (r *Root) CleanLeftover(dirOf string, l Leftover) (string, error) {
	d, _, err := r.dir(dirOf)
	if err != nil {
		return "", err
	}
	defer d.release()
	if l.Claimed {
		if err := unix.Linkat(d.fd, l.Name, d.fd, l.Base, 0); err == nil {
			unix.Unlinkat(d.fd, l.Name, 0)
			unix.Fsync(d.fd)
			return "put back " + l.Base + " from " + l.Name + " (a claim that was never finished)", nil
		}
	}
	if err := unix.Unlinkat(d.fd, l.Name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return "", r.pathErr("remove", filepath.Join(filepath.Dir(dirOf), l.Name), err)
	}
	return "removed " + l.Name, nil
}

// RemoveName removes a file of ours (a temp or quarantine name) in the directory of dirOf, if it exists.
func (r *Root) RemoveName(dirOf, name string) error {
	d, _, err := r.dir(dirOf)
	if err != nil {
		return err
	}
	defer d.release()
	if err := unix.Unlinkat(d.fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// ReadName reads a file of ours (a temp or quarantine name) in the directory of dirOf.
func (r *Root) ReadName(dirOf, name string) ([]byte, Snapshot, error) {
	return r.Read(filepath.Join(filepath.Dir(dirOf), name))
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

// exchange puts the temp file in place with RENAME_EXCHANGE, which leaves the replaced file at the temp
// name, and reports the replaced bytes when they are not the ones checked. They are never swapped back:
// our file has been visible since the rename, and a writer may already have read it. Filesystems without
// RENAME_EXCHANGE get a plain rename (then a write between check and rename cannot be seen; the window is
// microseconds wide).
func (r *Root) exchange(d dirFD, tmpName, base string, want Snapshot) (*Displaced, error) {
	err := unix.Renameat2(d.fd, tmpName, d.fd, base, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
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

// Resolve returns the real path that writing path would touch, refusing when a symlink (of the file or any
// directory above it) leads outside root. A path that does not exist yet is resolved through its directory.
// It is the plan-time resolution of in-root links; the writes themselves then follow no link at all.
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

// MkdirBeneath creates the folder path and any missing folders above it, beneath the root and without
// following a link, and returns the folders it created, deepest first, so the caller can take back exactly
// those. A folder that appears meanwhile (another writer's mkdir) is used, not an error.
func (r *Root) MkdirBeneath(path string) ([]string, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return nil, err
	}
	cur := dirFD{fd: int(r.f.Fd())}
	defer func() { cur.release() }()
	var created []string
	sofar := r.path
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		sofar = filepath.Join(sofar, c)
		if c == ".." || c == "." || c == "" {
			return created, &UnsafePathError{Path: sofar, Reason: "it climbs out of the run root"}
		}
		err := unix.Mkdirat(cur.fd, c, 0o755)
		switch {
		case err == nil:
			created = append([]string{sofar}, created...)
		case errors.Is(err, unix.EEXIST):
		default:
			return created, r.pathErr("mkdir", sofar, err)
		}
		fd, err := unix.Openat(cur.fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return created, r.pathErr("open", sofar, err)
		}
		cur.release()
		cur = dirFD{fd: fd, own: os.NewFile(uintptr(fd), sofar)}
	}
	return created, nil
}

// RemoveDirIfEmpty removes the folder path if it is empty, and reports whether it did. A folder someone has
// put a file in since is left, silently: it is theirs now.
func (r *Root) RemoveDirIfEmpty(path string) (bool, error) {
	d, base, err := r.dir(path)
	if err != nil {
		return false, err
	}
	defer d.release()
	switch err := unix.Unlinkat(d.fd, base, unix.AT_REMOVEDIR); {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOENT):
		return false, nil
	default:
		return false, r.pathErr("rmdir", path, err)
	}
}
