// Temp and quarantine files: the names runwatch gives the files it writes beside a run file (which carry
// their owner, so a crash's leftovers can be told from another writer's), and how leftovers are found,
// judged and cleaned.

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

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
