// The run root held open (Root): opening it, resolving names beneath its descriptor without following links,
// describing them (Lstat), and creating and removing folders beneath it. The file operations that go through
// it are in atomicfile.go, the names of temp and quarantine files in temp.go.

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Root is a run root held open: every later name is resolved beneath this descriptor, never through a link.
type Root struct {
	f    *os.File
	path string
	// BeforeRename, when set (by tests), runs in each Replace between the precondition check and the
	// rename, to play a writer that lands exactly there. It belongs to this root, so tests that set it run
	// in parallel.
	BeforeRename func()
	// beforePutBack, set by this package's tests, runs before each exchange back, to play a writer that
	// lands again while ours is in place.
	beforePutBack func(round int)
	// walkOnly makes this root's opens take the component walk even where openat2 exists (tests of the walk).
	walkOnly bool
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

// noOpenat2 makes openRel take the component walk even where openat2 exists: set once openat2 turns out to
// be missing (old kernels, some sandboxes).
var noOpenat2 atomic.Bool

// openRel opens rel beneath the root without following any link. Every open carries O_NOFOLLOW and
// O_CLOEXEC; callers add O_NONBLOCK so a FIFO cannot block the open. Linux resolves the whole name in the
// kernel (openBeneath, resolve_openat2.go); elsewhere, or when that is unavailable, the walk opens one
// component at a time, which refuses the same links and climbs.
func (r *Root) openRel(rel string, flags int, mode uint32) (*os.File, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	full := filepath.Join(r.path, rel)
	if !r.walkOnly && !noOpenat2.Load() {
		if f, done, err := r.openBeneath(rel, full, flags, mode); done {
			return f, err
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
	case linkRefused(err):
		return &UnsafePathError{Path: full, Reason: "a symlink lies on the way to it (a folder or the file itself was swapped for a link?); runwatch never follows links below the run root when writing"}
	case errors.Is(err, unix.EXDEV):
		return &UnsafePathError{Path: full, Reason: "it leads outside the run root " + r.path}
	case errors.Is(err, unix.ENOTDIR):
		return &UnsafePathError{Path: full, Reason: "a folder on the way to it is not a folder (a symlink or a file was put in its place?); runwatch never follows links below the run root when writing"}
	}
	return &fs.PathError{Op: op, Path: full, Err: err}
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
	// Mode is a uint16 on darwin and FreeBSD, Nlink a uint16 on darwin.
	return Info{Mode: modeOf(uint32(st.Mode)), Nlink: uint64(st.Nlink), UID: st.Uid, Size: st.Size,
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
