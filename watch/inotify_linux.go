//go:build linux

package watch

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// inotify is our own reader of Linux's inotify, not fsnotify's, though the team prefers a well-kept library:
// fsnotify keeps for every watch a struct with its path and an entry in two maps (by descriptor, by path),
// the watcher's largest cost a folder after the tree's own (issue 35; docs/BENCHMARKS.md). Here the tree's
// node keeps the descriptor and the one map is descriptor → path, the tree's own string. It watches folders
// one at a time and reports what fsnotify's inotify backend reports for such a watch: the same Op for the
// same mask, a watched folder's own deletion and move, the queue's overflow as fsnotify.ErrEventOverflow.
// A descriptor the kernel drops (IN_IGNORED, IN_UNMOUNT), or whose folder was deleted or moved away, is
// forgotten, and any later event of it ignored. Other systems keep fsnotify (notifier_other.go).
type inotify struct {
	fd   int
	file *os.File // read through the runtime's poller, so that Close ends a blocked read
	mu   sync.Mutex
	// closed: Close has closed fd.
	closed bool
	// paths: descriptor → the folder's path, as first added.
	paths    wdPaths
	evs      chan fsnotify.Event
	errs     chan error
	done     chan struct{}
	finished chan struct{}
	once     sync.Once
}

const inotifyMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVED_TO |
	unix.IN_MOVED_FROM | unix.IN_MOVE_SELF | unix.IN_ATTRIB

// errNotWatched: remove was given a folder this notifier does not watch (anymore).
var errNotWatched = errors.New("inotify: not watched")

// errClosed: add after Close.
var errClosed = errors.New("inotify: closed")

func newNotifier() (notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if fd == -1 {
		return nil, fmt.Errorf("couldn't initialize inotify: %w", err)
	}
	in := &inotify{fd: fd, file: os.NewFile(uintptr(fd), ""),
		evs: make(chan fsnotify.Event), errs: make(chan error), done: make(chan struct{}), finished: make(chan struct{})}
	go in.read()
	return in, nil
}

func (in *inotify) events() <-chan fsnotify.Event { return in.evs }
func (in *inotify) errors() <-chan error          { return in.errs }

func (in *inotify) add(dir string) (int32, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return 0, errClosed
	}
	wd, err := unix.InotifyAddWatch(in.fd, dir, inotifyMask)
	if wd == -1 {
		return 0, err
	}
	if p, ok := in.paths.get(int32(wd)); ok && p != dir {
		// The kernel knows the folder by its inode: another path of it has this watch already.
		return 0, errSameFolder
	}
	in.paths.set(int32(wd), dir)
	return int32(wd), nil
}

// identifies: the kernel gives a folder one watch however it is reached.
func (in *inotify) identifies() bool { return true }

func (in *inotify) remove(dir string, wd int32) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if p, ok := in.paths.get(wd); in.closed || !ok || p != dir {
		return errNotWatched
	}
	in.paths.del(wd)
	_, err := unix.InotifyRmWatch(in.fd, uint32(wd))
	return err
}

func (in *inotify) rekey(wd int32, same string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if p, ok := in.paths.get(wd); ok && p == same {
		in.paths.set(wd, same)
	}
}

// Close stops reading; the channels are closed once the reader has returned.
func (in *inotify) Close() error {
	var err error
	in.once.Do(func() {
		close(in.done)
		in.mu.Lock() // no add or remove on the descriptor once closed: its number may be another file's
		in.closed = true
		err = in.file.Close()
		in.mu.Unlock()
		<-in.finished
	})
	return err
}

func (in *inotify) read() {
	defer func() {
		close(in.finished)
		close(in.errs)
		close(in.evs)
	}()
	var buf [unix.SizeofInotifyEvent * 4096]byte
	for {
		n, err := in.file.Read(buf[:])
		switch {
		case errors.Is(err, os.ErrClosed):
			return
		case err == nil && n == 0:
			err = io.EOF
		case err == nil && n < unix.SizeofInotifyEvent:
			err = errors.New("inotify: short read")
		}
		if err != nil {
			if !in.send(fsnotify.Event{}, err) {
				return
			}
			continue
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			start := off + unix.SizeofInotifyEvent
			off = min(start+int(raw.Len), n)
			name := string(bytes.TrimRight(buf[start:off], "\x00"))
			if raw.Mask&unix.IN_Q_OVERFLOW != 0 && !in.send(fsnotify.Event{}, fsnotify.ErrEventOverflow) {
				return
			}
			if !in.send(in.event(raw.Wd, raw.Mask, name)) {
				return
			}
		}
	}
}

// event is what fsnotify reports for one inotify event on a folder it watches (no Op: nothing).
func (in *inotify) event(wd int32, mask uint32, name string) (fsnotify.Event, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	dir, ok := in.paths.get(wd)
	if !ok {
		return fsnotify.Event{}, nil
	}
	if mask&(unix.IN_IGNORED|unix.IN_UNMOUNT) != 0 {
		in.paths.del(wd)
		return fsnotify.Event{}, nil
	}
	var err error
	switch {
	case mask&unix.IN_DELETE_SELF != 0:
		// Reported also when the parent is watched and its IN_DELETE says the same (fsnotify skips this one,
		// looking the parent up by its path, a map we do not keep): the batch merges the two.
		in.paths.del(wd)
	case mask&unix.IN_MOVE_SELF != 0:
		in.paths.del(wd)
		if _, err = unix.InotifyRmWatch(in.fd, uint32(wd)); errors.Is(err, unix.EINVAL) {
			err = nil // the kernel dropped it already
		}
	}
	path := dir
	if name != "" {
		path = dir + "/" + name
	}
	return fsnotify.Event{Name: path, Op: opOf(mask)}, err
}

func opOf(mask uint32) fsnotify.Op {
	var op fsnotify.Op
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		op |= fsnotify.Create
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_DELETE) != 0 {
		op |= fsnotify.Remove
	}
	if mask&unix.IN_MODIFY != 0 {
		op |= fsnotify.Write
	}
	if mask&(unix.IN_MOVE_SELF|unix.IN_MOVED_FROM) != 0 {
		op |= fsnotify.Rename
	}
	if mask&unix.IN_ATTRIB != 0 {
		op |= fsnotify.Chmod
	}
	return op
}

// send hands on an event with an Op, then an error, unless closed first.
func (in *inotify) send(ev fsnotify.Event, err error) bool {
	if ev.Op != 0 {
		select {
		case in.evs <- ev:
		case <-in.done:
			return false
		}
	}
	if err != nil {
		select {
		case in.errs <- err:
		case <-in.done:
			return false
		}
	}
	return true
}

// wdPaths are the watches' descriptors and paths, sorted by descriptor: 24 bytes a watch, where a map's
// slots at their load took 44 (issue 35). The kernel hands descriptors out in increasing order, so a new
// one goes at the end; one removed leaves its path empty until half of them are.
type wdPaths struct {
	w    []wdPath
	gone int
}

type wdPath struct {
	wd   int32
	path string
}

func (x *wdPaths) find(wd int32) (int, bool) {
	return slices.BinarySearchFunc(x.w, wd, func(e wdPath, wd int32) int { return cmp.Compare(e.wd, wd) })
}

func (x *wdPaths) get(wd int32) (string, bool) {
	if i, ok := x.find(wd); ok && x.w[i].path != "" {
		return x.w[i].path, true
	}
	return "", false
}

func (x *wdPaths) set(wd int32, path string) {
	i, ok := x.find(wd)
	switch {
	case !ok:
		x.w = slices.Insert(x.w, i, wdPath{wd, path})
	case x.w[i].path == "":
		x.gone--
		fallthrough
	default:
		x.w[i].path = path
	}
}

func (x *wdPaths) del(wd int32) {
	i, ok := x.find(wd)
	if !ok || x.w[i].path == "" {
		return
	}
	x.w[i].path = ""
	if x.gone++; x.gone > len(x.w)/2 {
		x.w = slices.DeleteFunc(x.w, func(e wdPath) bool { return e.path == "" })
		x.gone = 0
	}
}

func (x *wdPaths) len() int { return len(x.w) - x.gone }
