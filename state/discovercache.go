package state

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"runwatch/model"
	"runwatch/state/cachedir"
	"runwatch/userdir"
)

// Completing a run id walks the roots on every TAB, and in a tree of 100,000 runs the walk alone lists
// thousands of folders (0.5-1.5 s). The walk cache keeps, between keystrokes, what the last walk learnt:
// each folder it listed, with the folder's stat when listed, and, on the entries of a folder of runs, which
// run folders one Lstat found holding state.env. A keystroke in an unchanged tree then costs reading the cache
// and one stat of each folder that was listed (roots, folders of runs, projects, features folders), not a
// stat or a listing of every run folder.
//
// What may be reused:
//   - A folder's listing, only while the folder's stat (device, inode, mtime and ctime in ns, size) is
//     unchanged, and only if its mtime is older than the moment of the listing by racyMargin. Timestamps move
//     by ticks (a second on some file systems): an entry made in the same tick as the listing, or after it,
//     leaves the mtime equal, so such a listing is taken again next time (git's "racily clean" index).
//   - "The run folder X of a refused name holds state.env", while the listing of X's parent is reused. This
//     is the one fact that can go stale: a run folder that loses its state.env but stays is still taken for
//     a run folder, and not looked into, until its parent changes (X itself, once its name is typed, is
//     listed and checked by its own stat). What that costs is candidates (runs put inside such a folder are
//     not offered), never an action: every command finds and reads its run itself, and the cache is
//     completion's alone. A folder without state.env is walked, so listed, and its own stat vouches for it.
//
// The cache is a cache: a file that is missing, damaged, truncated, of another version or too large is
// ignored and rebuilt; a folder or file we do not own, that others may write, or that is a link is refused
// (not read, not written) and completion walks as before. Only completion uses it: status, the dashboard
// and every action walk the tree itself, so no write rests on a cached guess.

// racyMargin: a listing whose folder's mtime is not this much older than the listing is not reused.
const racyMargin = 2 * time.Second

// maxWalkCacheBytes caps a cache file, read or written: above it, the walk is not worth keeping.
const maxWalkCacheBytes = 64 << 20

// walkCacheMagic heads every cache file; a file of another version is ignored (and replaced).
const walkCacheMagic = "runwatch walk cache 1\n"

// WalkCache says where DiscoverNamedCached keeps its cache.
type WalkCache struct {
	// Dir holds the cache files (DefaultWalkCacheDir); "" means no cache.
	Dir string
	// ReadOnly reads the cache and never writes it (nor makes its folder): read-only mode writes nothing.
	ReadOnly bool
}

// DefaultWalkCacheDir is $XDG_CACHE_HOME/runwatch, else ~/.cache/runwatch (userdir.Cache), or "", in the
// environment getenv reads.
func DefaultWalkCacheDir(getenv func(string) string) string { return userdir.RunwatchCache(getenv) }

// DiscoverNamedCached is Discover for a caller that needs only the runs whose folder is named as named
// accepts, such as completion of a typed prefix of a run id (a run's id is its folder's name), answered where
// it can be from the walk cache of the same paths and depth (see above), for completion alone. It reads no
// file of a run whose name named refuses and lists no run folder of such a name: a folder holding state.env
// is a run folder, never a folder of runs, and one stat of that file says so; a feature folder is not looked
// into; a folder without state.env but with a run.log or an artifacts folder is taken for a run folder (or
// none) without reading its log. It returns what Discover returns for the folders named accepts, and the
// runs of other names it comes across in the folders it lists (<name>.state.env files in a folder of runs),
// which the caller filters; the <name>.state.env files inside run folders of refused names are not looked
// for. The cache may miss runs inside a run folder of a refused name that lost its state.env since it
// learnt it had one.
func DiscoverNamedCached(paths []string, maxDepth int, named func(folder string) bool, c WalkCache) ([]Location, error) {
	return discoverCached(paths, maxDepth, named, c, osFS{})
}

// discoverCached is DiscoverNamedCached with the file system's reads made by inner (tests count them, or
// make timestamps coarse).
func discoverCached(paths []string, maxDepth int, named func(string) bool, c WalkCache, inner walkFS) ([]Location, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if !walkCacheSupported || c.Dir == "" {
		return discover(paths, maxDepth, named, inner)
	}
	store, ok := openWalkCache(c.Dir, walkCacheKey(paths, maxDepth), !c.ReadOnly)
	if !ok {
		return discover(paths, maxDepth, named, inner)
	}
	defer store.close()
	cw := newCachedWalk(inner, store.folders)
	cw.prestat()
	locs, err := discover(paths, maxDepth, named, cw)
	if !c.ReadOnly && cw.dirty() {
		store.save(cw.used)
	}
	return locs, err
}

// walkCacheKey names what a cache is of: the absolute paths, in order, and the depth.
func walkCacheKey(paths []string, maxDepth int) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(maxDepth))
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		b.WriteByte(0)
		b.WriteString(p)
	}
	return b.String()
}

// statKey is what a folder's listing is checked against. ok is false where the system gives none of it.
type statKey struct {
	dev, ino     uint64
	mtime, ctime int64
	size         int64
	ok           bool
}

// folderRec is one folder's listing, as os.ReadDir gave it (sorted by name), and when it was taken.
type folderRec struct {
	path    string
	key     statKey
	taken   int64 // unix ns, read just before the listing
	entries []cachedEntry
	cursor  int // where the last find stopped: the walk asks about siblings in order
	// now is the folder's stat for this walk, taken ahead of it by prestat; used once.
	now *statResult
}

type statResult struct {
	fi  fs.FileInfo
	key statKey
	err error
}

type cachedEntry struct {
	name string
	typ  fs.FileMode // fs.ModeType bits, as the listing gave them
	// runSeen: name/state.env was found there (a run folder of a refused name), while this listing holds.
	runSeen bool
	folder  *folderRec
}

func (e *cachedEntry) Name() string      { return e.name }
func (e *cachedEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *cachedEntry) Type() fs.FileMode { return e.typ }
func (e *cachedEntry) Info() (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(e.folder.path, e.name))
}
func (e *cachedEntry) String() string { return fs.FormatDirEntry(e) }

func (r *folderRec) list() []fs.DirEntry {
	out := make([]fs.DirEntry, len(r.entries))
	for i := range r.entries {
		out[i] = &r.entries[i]
	}
	return out
}

func (r *folderRec) find(name string) *cachedEntry {
	for _, i := range [2]int{r.cursor, r.cursor + 1} {
		if i < len(r.entries) && r.entries[i].name == name {
			r.cursor = i
			return &r.entries[i]
		}
	}
	i := sort.Search(len(r.entries), func(i int) bool { return r.entries[i].name >= name })
	if i < len(r.entries) && r.entries[i].name == name {
		r.cursor = i
		return &r.entries[i]
	}
	return nil
}

// holdsStateEnv answers osFS.holdsStateEnv from the listing.
func (r *folderRec) holdsStateEnv() bool {
	e := r.find("state.env")
	return e != nil && !e.typ.IsDir()
}

func recordOf(dir string, key statKey, taken int64, entries []fs.DirEntry) *folderRec {
	r := &folderRec{path: dir, key: key, taken: taken, entries: make([]cachedEntry, len(entries))}
	for i, e := range entries {
		r.entries[i] = cachedEntry{name: e.Name(), typ: e.Type() & fs.ModeType, folder: r}
	}
	return r
}

// cachedWalk is the walkFS of a walk with a cache: what old vouches for is answered from it, the rest is
// read by inner and recorded. used is what the walk needed, the next cache.
type cachedWalk struct {
	inner   walkFS
	now     func() time.Time
	old     map[string]*folderRec
	used    map[string]*folderRec
	changed bool
	reused  int // records of old that were used
	// last is the last folder stat'ed: the walk stats a folder, then lists it, and a look at a child's own
	// listing (holdsStateEnv) comes just before the walk of that child.
	last struct {
		dir string
		fi  fs.FileInfo
		key statKey
		err error
	}
	parent *folderRec // the folder whose entries holdsStateEnv last looked at
}

func newCachedWalk(inner walkFS, old map[string]*folderRec) *cachedWalk {
	return &cachedWalk{inner: inner, now: time.Now, old: old, used: make(map[string]*folderRec, len(old))}
}

// dirty: the cache is worth writing again: a listing was taken or a fact learnt, or a quarter of the folders
// it holds were not met. Typing on narrows the prefix, and the run folders of the longer one are a few of
// those the cache holds: they cost a stat each until the next write, which is cheaper than writing it all.
func (w *cachedWalk) dirty() bool { return w.changed || len(w.old)-w.reused > len(w.old)/4 }

func (w *cachedWalk) stat(dir string) (fs.FileInfo, statKey, error) {
	if w.last.dir != dir || w.last.dir == "" {
		var r statResult
		if rec := w.old[dir]; rec != nil && rec.now != nil {
			r, rec.now = *rec.now, nil
		} else {
			r = statOf(w.inner, dir)
		}
		w.last.dir, w.last.fi, w.last.key, w.last.err = dir, r.fi, r.key, r.err
	}
	return w.last.fi, w.last.key, w.last.err
}

func statOf(fsys walkFS, dir string) statResult {
	fi, err := fsys.statDir(dir)
	r := statResult{fi: fi, err: err}
	if err == nil {
		r.key = statKeyOf(fi)
	}
	return r
}

// prestat stats every folder the cache holds, several at a time, before the walk asks for them one by one:
// in an unchanged tree those stats are all a keystroke costs besides reading the cache, and there are as
// many as folders listed (in a workspace of 100,000 runs, tens of thousands of them).
func (w *cachedWalk) prestat() {
	recs := make([]*folderRec, 0, len(w.old))
	for _, r := range w.old {
		recs = append(recs, r)
	}
	workers := min(4*runtime.GOMAXPROCS(0), 16, len(recs)/256+1)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for _, r := range recs[i*len(recs)/workers : (i+1)*len(recs)/workers] {
				st := statOf(w.inner, r.path)
				r.now = &st
			}
		})
	}
	wg.Wait()
}

// valid: rec may stand for the folder whose stat is key now.
func (w *cachedWalk) valid(rec *folderRec, key statKey) bool {
	return key.ok && rec.key == key && rec.key.mtime < rec.taken-racyMargin.Nanoseconds()
}

func (w *cachedWalk) statDir(dir string) (fs.FileInfo, error) {
	fi, _, err := w.stat(dir)
	return fi, err
}

func (w *cachedWalk) readDir(dir string) ([]fs.DirEntry, error) {
	fi, key, err := w.stat(dir)
	if err == nil && fi.IsDir() {
		if rec := w.old[dir]; rec != nil && w.valid(rec, key) {
			if w.used[dir] == nil {
				w.reused++
			}
			w.used[dir] = rec
			return rec.list(), nil
		}
	}
	taken := w.now().UnixNano()
	entries, rerr := w.inner.readDir(dir)
	if rerr == nil && err == nil && key.ok && fi.IsDir() {
		w.used[dir] = recordOf(dir, key, taken, entries)
		w.changed = true
	}
	return entries, rerr
}

func (w *cachedWalk) holdsStateEnv(parentDir, name string) bool {
	if w.parent == nil || w.parent.path != parentDir {
		w.parent = w.used[parentDir]
	}
	var e *cachedEntry
	if w.parent != nil {
		if e = w.parent.find(name); e != nil && e.runSeen {
			return true
		}
	}
	dir := model.ChildPath(parentDir, name)
	if rec := w.old[dir]; rec != nil {
		// A folder listed before, perhaps as a run of a name asked for then: its listing, if it holds, says.
		// The file already holds what it says, so learning it again is no reason to write the file.
		if _, key, err := w.stat(dir); err == nil && w.valid(rec, key) {
			has := rec.holdsStateEnv()
			if has && e != nil {
				e.runSeen = true
			}
			return has
		}
	}
	has := w.inner.holdsStateEnv(parentDir, name)
	if has && e != nil {
		e.runSeen = true
		w.changed = true
	}
	return has
}

// walkCacheFile is an open cache folder, checked, and what its file for one key held.
type walkCacheFile struct {
	dir     *cachedir.Dir
	name    string
	key     string
	folders map[string]*folderRec
	isNew   bool // no file for key yet
}

func (c *walkCacheFile) close() { c.dir.Close() }

// openWalkCache opens the cache folder (making it, 0700, when create is set) and reads the file for key.
// ok is false when the folder or the file is refused (cachedir): then the cache is neither read nor
// written, and completion quietly walks the tree. A file that is missing, too large or unreadable as a
// cache gives no folders, and will be replaced.
func openWalkCache(dir, key string, create bool) (*walkCacheFile, bool) {
	d, ok := cachedir.Open(dir, create)
	if !ok {
		return nil, false
	}
	sum := sha256.Sum256([]byte(key))
	c := &walkCacheFile{dir: d, name: "walk-" + hex.EncodeToString(sum[:16]), key: key, folders: map[string]*folderRec{}}
	data, err := d.ReadFile(c.name, maxWalkCacheBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.isNew = true
		return c, true
	case errors.Is(err, cachedir.ErrRefused):
		d.Close()
		return nil, false
	case err != nil:
		return c, true
	}
	if folders, err := decodeWalkCache(data, key); err == nil {
		c.folders = folders
	}
	return c, true
}

// save replaces the cache file with folders (whole: a reader sees the old cache or the new). Failures leave
// the old file.
func (c *walkCacheFile) save(folders map[string]*folderRec) {
	data := encodeWalkCache(folders, c.key)
	if len(data) > maxWalkCacheBytes {
		return
	}
	_ = c.dir.WriteFile(c.name, data) // a cache: one not written costs the next keystroke a walk
	if c.isNew {
		// When a cache file is made, so a keystroke in a known tree lists no folder.
		c.dir.RemoveUnused(func(name string) bool {
			return strings.HasPrefix(name, "walk-") || strings.HasPrefix(name, ".walk-")
		}, unusedFor)
	}
}

// unusedFor: a cache file (of roots given once, a folder TAB was pressed in) not written for this long goes,
// with the temp files a killed completion left.
const unusedFor = 30 * 24 * time.Hour

// The file: walkCacheMagic, then uvarint-length-prefixed fields (names are bytes, any but '/' and NUL):
// the key; the count of folders; per folder its path (as the length it shares with the previous path and
// the rest), device, inode, mtime, ctime, size, the time of the listing, the count of entries and per entry
// its name and one byte (type, and 0x80 for runSeen). Last, the CRC-32C of all before it: a damaged file
// is ignored whole, never read as other names.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entry types, as one byte
var typeCodes = []fs.FileMode{0, fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice,
	fs.ModeDevice | fs.ModeCharDevice, fs.ModeIrregular}

const runSeenBit = 0x80

func typeCode(m fs.FileMode) byte {
	for i, t := range typeCodes {
		if m == t {
			return byte(i)
		}
	}
	return byte(len(typeCodes) - 1) // a type Go adds later: irregular, so never taken for a folder or file
}

func encodeWalkCache(folders map[string]*folderRec, key string) []byte {
	paths := make([]string, 0, len(folders))
	size := len(walkCacheMagic) + len(key) + 16
	for p, r := range folders {
		paths = append(paths, p)
		size += len(p) + 64 + 16*len(r.entries)
		for _, e := range r.entries {
			size += len(e.name)
		}
	}
	sort.Strings(paths)
	b := make([]byte, 0, size)
	b = append(b, walkCacheMagic...)
	b = appendString(b, key)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	prev := ""
	for _, p := range paths {
		r := folders[p]
		shared := 0
		for shared < len(p) && shared < len(prev) && p[shared] == prev[shared] {
			shared++
		}
		b = binary.AppendUvarint(b, uint64(shared))
		b = appendString(b, p[shared:])
		prev = p
		b = binary.AppendUvarint(b, r.key.dev)
		b = binary.AppendUvarint(b, r.key.ino)
		b = binary.AppendVarint(b, r.key.mtime)
		b = binary.AppendVarint(b, r.key.ctime)
		b = binary.AppendVarint(b, r.key.size)
		b = binary.AppendVarint(b, r.taken)
		b = binary.AppendUvarint(b, uint64(len(r.entries)))
		for _, e := range r.entries {
			b = appendString(b, e.name)
			flags := typeCode(e.typ)
			if e.runSeen {
				flags |= runSeenBit
			}
			b = append(b, flags)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errBadWalkCache = errors.New("not a walk cache of this version and key")

// decodeWalkCache reads what encodeWalkCache wrote for key; anything else is errBadWalkCache. Names are
// substrings of one copy of data, not a string each.
func decodeWalkCache(data []byte, key string) (map[string]*folderRec, error) {
	if len(data) < len(walkCacheMagic)+4 || string(data[:len(walkCacheMagic)]) != walkCacheMagic {
		return nil, errBadWalkCache
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, errBadWalkCache
	}
	d := decoder{s: string(body), i: len(walkCacheMagic)}
	if d.str() != key {
		return nil, errBadWalkCache
	}
	n := d.count(2)
	folders := make(map[string]*folderRec, n)
	prev := ""
	for range n {
		shared := d.uvarint()
		if shared > uint64(len(prev)) {
			return nil, errBadWalkCache
		}
		path := prev[:shared] + d.str()
		if d.bad || path <= prev || !filepath.IsAbs(path) || filepath.Clean(path) != path {
			return nil, errBadWalkCache
		}
		prev = path
		r := &folderRec{path: path, key: statKey{ok: true}}
		r.key.dev, r.key.ino = d.uvarint(), d.uvarint()
		r.key.mtime, r.key.ctime, r.key.size, r.taken = d.varint(), d.varint(), d.varint(), d.varint()
		r.entries = make([]cachedEntry, d.count(2))
		last := ""
		for i := range r.entries {
			name := d.str()
			flags := d.byte()
			if d.bad || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 || strings.IndexByte(name, 0) >= 0 ||
				i > 0 && name <= last || int(flags&^runSeenBit) >= len(typeCodes) {
				return nil, errBadWalkCache
			}
			last = name
			r.entries[i] = cachedEntry{name: name, typ: typeCodes[flags&^runSeenBit], runSeen: flags&runSeenBit != 0, folder: r}
		}
		if d.bad {
			return nil, errBadWalkCache
		}
		folders[path] = r
	}
	if d.bad || d.i != len(d.s) {
		return nil, errBadWalkCache
	}
	return folders, nil
}

// decoder reads the fields of a cache file; past the end or a bad varint, bad is set and all reads give
// zero values.
type decoder struct {
	s   string
	i   int
	bad bool
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	for shift := uint(0); !d.bad; shift += 7 {
		if d.i >= len(d.s) || shift > 63 {
			d.bad = true
			break
		}
		c := d.s[d.i]
		d.i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) byte() byte {
	if d.bad || d.i >= len(d.s) {
		d.bad = true
		return 0
	}
	d.i++
	return d.s[d.i-1]
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.s)-d.i) {
		d.bad = true
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

// count reads a count of things each at least min bytes long: one the rest of the file cannot hold is bad,
// so a damaged count never allocates more than the file's size.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.bad || n > uint64((len(d.s)-d.i)/min) {
		d.bad = true
		return 0
	}
	return int(n)
}
