package envfile

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadFileInfo's File keeps the bytes it read as its text, without the copy Parse makes of a caller's
// (status reads two env files a run): reading a file is safefile.Read's allocations, the File and its lines.
func TestReadFileDoesNotCopyWhatItRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.env")
	if err := os.WriteFile(path, []byte("\uFEFFA=1\nB=\"two\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := ReadFileInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Get("B"); v != "two" || string(f.Bytes()) != "\uFEFFA=1\nB=\"two\"\n" {
		t.Fatalf("B=%q, bytes %q", v, f.Bytes())
	}
	// safefile.Read: the path twice (stat, open), the bytes and the FileInfo; then the File and its lines.
	if n := testing.AllocsPerRun(50, func() { _, _, _ = ReadFileInfo(path) }); n > 6 {
		t.Errorf("ReadFileInfo allocates %.0f times, want at most 6", n)
	}
}
