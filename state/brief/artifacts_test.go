package brief

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestScanArtifactBlocks(t *testing.T) {
	t.Parallel()
	x := memoryOnly()
	long := strings.Repeat("x", maxScanLine*2)
	log := strings.Join([]string{
		"[2026-02-15T01:50:43Z] run bootstrapped",
		"  artifact=/not/in/a/block.json",
		"[2026-02-15T01:58:34Z] S1 artifact integrity",
		"  artifact=/r/artifacts/s1/a.json",
		"  sha256=00",
		"\tartifact=/r/artifacts/s1/b.log\r",
		"[2026-02-15T01:59:00Z] " + long,
		"  artifact=/after/a/long/line.json",
		"[2026-02-15T02:10:00Z] S2 artifact integrity",
		"  artifact=/r/artifacts/s1/a.json",
		"  artifact=",
		"free text artifact=/continuation/still/in/block.json",
		"[not a timestamp] S3 artifact integrity",
		"  artifact=/r/artifacts/s3/c.json",
	}, "\n") // no final newline: the last line is still read
	path := filepath.Join(t.TempDir(), "run.log")
	writeFile(t, path, log)
	got, err := x.scan(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []recordedArtifact{
		{Stage: "S2", Path: "/r/artifacts/s1/a.json"}, // recorded again by S2: the later block wins
		{Stage: "S1", Path: "/r/artifacts/s1/b.log"},
		{Stage: "S2", Path: "/r/artifacts/s3/c.json"}, // "[not a timestamp]" is a continuation line
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := x.scan(filepath.Join(t.TempDir(), "missing.log")); !os.IsNotExist(err) {
		t.Fatalf("missing log: %v", err)
	}
}

func FuzzScanArtifactBlocks(f *testing.F) {
	f.Add([]byte("[2026-02-15T01:58:34Z] S1 artifact integrity\n  artifact=/a\n  sha256=1\n"))
	f.Add([]byte("[] artifact integrity\nartifact=\n[2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := memoryOnly()
		path := filepath.Join(t.TempDir(), "run.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := x.scan(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := scanArtifactBlocksByLine(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("indexed scan %+v\nline scan %+v", got, want)
		}
		// The same log written in two parts, scanned after each: the second scan starts from the index.
		split := filepath.Join(t.TempDir(), "run.log")
		if err := os.WriteFile(split, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := x.scan(split); err != nil {
			t.Fatal(err)
		}
		appendFile(t, split, string(data[len(data)/2:]))
		if again, err := x.scan(split); err != nil || !reflect.DeepEqual(again, want) {
			t.Fatalf("scanned in two parts: %+v (%v)\nwhole: %+v", again, err, want)
		}
		seen := map[string]bool{}
		for _, a := range got {
			if a.Path == "" || seen[a.Path] {
				t.Fatalf("empty or repeated path in %+v", got)
			}
			seen[a.Path] = true
		}
	})
}

// BenchmarkScanArtifactBlocks measures the run.log pass of a resumable brief: a first one over the whole log,
// and one that starts from the index. Indexes go to a temporary folder, never the user's cache.
func BenchmarkScanArtifactBlocks(b *testing.B) {
	x := indexTest{newIndexStore(), IndexCache{Dir: b.TempDir()}}
	path := filepath.Join(b.TempDir(), "run.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(w, "[2026-02-15T01:50:%02dZ] stage_progress stage=S%d step=%d detail=%s\n", i%60, i%9, i, strings.Repeat("y", 60))
		if i%10_000 == 0 {
			fmt.Fprintf(w, "[2026-02-15T01:58:34Z] S%d artifact integrity\n  artifact=/r/artifacts/%d.json\n  sha256=00\n  size_bytes=2\n", i%9, i)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	b.Run("full", func(b *testing.B) {
		b.SetBytes(st.Size())
		for b.Loop() {
			x.forget()
			if _, err := x.scan(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a later brief costs: the index checked, a few appended lines read.
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			appendFile(b, path, "[2026-02-15T03:00:00Z] stage_progress stage=S1\n")
			if _, err := x.scan(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// scanArtifactBlocksByLine is the line-by-line scan the indexed one replaced, kept as its reference: it streams run.log and returns the artifact= paths of `<STAGE> artifact integrity` entries,
// in log order. A later block for the same path replaces the earlier one.
func scanArtifactBlocksByLine(path string) ([]recordedArtifact, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, maxScanLine)
	var out []recordedArtifact
	index := map[string]int{}
	inBlock, stage := false, ""
	for {
		line, err := readLine(r)
		// Only entry heads and the continuation lines of an integrity block are looked at closely, and
		// nothing is copied unless it is kept: a 1 GiB log is mostly lines this scan skips.
		if len(line) > 0 {
			switch {
			case startsEntry(line):
				inBlock, stage = false, ""
				msg := line[bytes.IndexByte(line, ']')+1:]
				if i := bytes.Index(msg, artifactIntegrity); i >= 0 {
					inBlock, stage = true, string(bytes.TrimSpace(msg[:i]))
				}
			case inBlock:
				if p, ok := bytes.CutPrefix(bytes.TrimSpace(line), artifactKey); ok && len(p) > 0 {
					path := string(p)
					if i, seen := index[path]; seen {
						out[i].Stage = stage
					} else {
						index[path] = len(out)
						out = append(out, recordedArtifact{Stage: stage, Path: path})
					}
				}
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// readLine returns the next line without its newline, cut at maxScanLine (the rest is discarded).
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		kept := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.ReadSlice('\n')
		}
		return kept, err
	}
	return bytes.TrimRight(line, "\r\n"), err
}

func appendFile(t testing.TB, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// indexTest is an index store of the test's own, and the cache folder it keeps indexes in ("" for none).
type indexTest struct {
	*indexStore
	cache IndexCache
}

func (x indexTest) scan(path string) ([]recordedArtifact, error) {
	return x.scanArtifactBlocks(path, x.cache)
}

// forget drops the indexes in memory, as a new process would start.
func (x indexTest) forget() {
	x.mu.Lock()
	x.mem = map[string]*artifactIndex{}
	x.mu.Unlock()
}

// memoryOnly is a store of the test's own that keeps its indexes in memory only.
func memoryOnly() indexTest { return indexTest{indexStore: newIndexStore()} }

// useIndexDir is a store of the test's own that keeps its indexes in a fresh folder, whatever the log's size.
func useIndexDir(t testing.TB) (string, indexTest) {
	t.Helper()
	dir := t.TempDir()
	x := indexTest{newIndexStore(), IndexCache{Dir: dir}}
	x.persistMin = 1
	return dir, x
}

func integrityBlock(ts, stage string, paths ...string) string {
	s := "[" + ts + "] " + stage + " artifact integrity\n"
	for _, p := range paths {
		s += "  artifact=" + p + "\n  sha256=00\n"
	}
	return s
}

// A second brief of a grown log reads what was appended and the two small windows that check the index,
// from memory or, in a new process, from the index file; the result is the one a full scan gives.
func TestArtifactIndexReadsOnlyWhatWasAppended(t *testing.T) {
	t.Parallel()
	dir, x := useIndexDir(t)
	path := filepath.Join(t.TempDir(), "run.log")
	filler := strings.Repeat("[2026-02-15T01:50:00Z] stage_progress stage=S1 detail=yyyyyyyyyyyyyyyyyyyyyyyy\n", 20000)
	writeFile(t, path, integrityBlock("2026-02-15T01:58:34Z", "S1", "/r/a.json")+filler+
		"[2026-02-15T02:00:00Z] S2 artifact integrity\n  artifact=/r/b.json\n  sha") // cut mid-block, mid-line
	if _, err := x.scan(path); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("index files %v, want one", files)
	}
	for _, fromDisk := range []bool{false, true} {
		if fromDisk {
			x.forget() // as a new process would start
		}
		appended := "256=00\n  artifact=/r/c.json\n" + integrityBlock("2026-02-15T02:01:00Z", "S3", "/r/a.json")
		appendFile(t, path, appended)
		before := x.scanned.Load()
		got, err := x.scan(path)
		if err != nil {
			t.Fatal(err)
		}
		read := x.scanned.Load() - before
		if read > int64(len(appended))+200 {
			t.Errorf("fromDisk=%v: read %d bytes of the log for %d appended", fromDisk, read, len(appended))
		}
		want, _ := scanArtifactBlocksByLine(path)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fromDisk=%v: indexed %+v\nfull %+v", fromDisk, got, want)
		}
	}
}

// The index is checked against the log, never trusted: a log rewritten in place, shortened, or replaced by
// another file is scanned again from the start.
func TestArtifactIndexNoticesARewrittenLog(t *testing.T) {
	t.Parallel()
	_, x := useIndexDir(t)
	path := filepath.Join(t.TempDir(), "run.log")
	filler := strings.Repeat("[2026-02-15T01:50:00Z] stage_progress stage=S1 detail=yyyyyyyyyyyyyyyyyyyyyyyy\n", 2000)
	original := integrityBlock("2026-02-15T01:58:34Z", "S1", "/r/a.json") + filler + integrityBlock("2026-02-15T02:00:00Z", "S2", "/r/b.json")
	cases := map[string]func(){
		"rewritten at its start, same size": func() {
			writeFileInPlace(t, path, strings.Replace(original, "/r/a.json", "/r/x.json", 1))
		},
		"rewritten at its end, same size": func() {
			writeFileInPlace(t, path, strings.Replace(original, "/r/b.json", "/r/y.json", 1))
		},
		"shortened": func() { writeFileInPlace(t, path, integrityBlock("2026-02-15T01:58:34Z", "S9", "/r/z.json")) },
		"replaced by a new file": func() {
			tmp := path + ".new"
			writeFile(t, tmp, integrityBlock("2026-02-15T01:58:34Z", "S1", "/r/a.json")+filler+integrityBlock("2026-02-15T02:00:00Z", "S2", "/r/w.json"))
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			writeFile(t, path, original)
			if _, err := x.scan(path); err != nil {
				t.Fatal(err)
			}
			change()
			got, err := x.scan(path)
			want, _ := scanArtifactBlocksByLine(path)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("after the change: %+v (%v)\nfull scan: %+v", got, err, want)
			}
		})
	}
}

func writeFileInPlace(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Chunk boundaries anywhere (in a block, in a line, in the marker), lines longer than a chunk and than the
// line cap: the chunked scan keeps what the line reader keeps.
func TestArtifactScanAcrossChunkBoundaries(t *testing.T) {
	t.Parallel()
	_, x := useIndexDir(t)
	long := strings.Repeat("z", maxScanLine+10)
	var b strings.Builder
	for i := 0; i < 300; i++ {
		switch i % 7 {
		case 0:
			b.WriteString(integrityBlock("2026-02-15T01:58:34Z", fmt.Sprintf("S%d", i%5), fmt.Sprintf("/r/%d.json", i%40)))
		case 3:
			fmt.Fprintf(&b, "[2026-02-15T01:59:00Z] S%d artifact integrity %s\n  artifact=/long/%d\n", i, long, i)
		case 5:
			fmt.Fprintf(&b, "  artifact=%s%d\r\n", long, i)
		default:
			fmt.Fprintf(&b, "[2026-02-15T01:59:%02dZ] note %d\n", i%60, i)
		}
	}
	b.WriteString("[2026-02-15T02:00:00Z] S7 artifact integrity\n  artifact=" + strings.Repeat("q", 3*maxScanLine)) // unterminated
	path := filepath.Join(t.TempDir(), "run.log")
	writeFile(t, path, b.String())
	want, err := scanArtifactBlocksByLine(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{maxScanLine + 1, maxScanLine + 7919, 2*maxScanLine + 3} {
		x.chunk = chunk
		x.forget()
		got, err := x.scan(path)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("chunk %d: %d recorded (%v), want %d", chunk, len(got), err, len(want))
		}
	}
}

// An index folder that others may write, or an index file that is a link, is neither read nor written
// (cachedir): an index planted there could make a brief report artifacts the log never recorded.
func TestArtifactIndexNotOursAloneIsNeitherReadNorWritten(t *testing.T) {
	t.Parallel()
	dir, x := useIndexDir(t)
	path := filepath.Join(t.TempDir(), "run.log")
	filler := strings.Repeat("[2026-02-15T01:50:00Z] stage_progress stage=S1 detail=yyyyyyyyyyyyyyyyyyyyyyyy\n", 2000)
	writeFile(t, path, integrityBlock("2026-02-15T01:58:34Z", "S1", "/r/a.json")+filler)
	if _, err := x.scan(path); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("index files %v, want one", files)
	}
	index := files[0]
	written, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	fullScan := func(what string) {
		t.Helper()
		x.forget() // as a new process would start
		appendFile(t, path, integrityBlock("2026-02-15T02:01:00Z", "S3", "/r/b.json"))
		fi, _ := os.Stat(path)
		before := x.scanned.Load()
		got, err := x.scan(path)
		if err != nil {
			t.Fatal(err)
		}
		if read := x.scanned.Load() - before; read < fi.Size() {
			t.Errorf("%s: the brief read %d of the log's %d bytes: it used the index", what, read, fi.Size())
		}
		if want, _ := scanArtifactBlocksByLine(path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: scanned %+v, want %+v", what, got, want)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	fullScan("a folder others may write")
	if now, _ := os.ReadFile(index); string(now) != string(written) {
		t.Errorf("the index in a folder others may write was written again")
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "planted.json")
	if err := os.Rename(index, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, index); err != nil {
		t.Fatal(err)
	}
	fullScan("an index file that is a link")
}
