// Package jonggrang reads one feature of a jonggrang project (MANIFEST.yaml, phase output files, tasks,
// progress) together with the project's locks and ephemeral gates into a model.Run.
//
// Every file here is written by agents and by JavaScript code that writes without a temp file or a lock, so
// every read is capped, never blocks on special files, and turns anything it cannot understand into a
// problem on the run instead of an error or a panic.
package jonggrang

import (
	"fmt"
	"io"
	"os"

	"runwatch/state/safefile"
)

// Size caps. A manifest larger than 1 MiB is not a manifest js-yaml wrote; decoding it would only cost
// memory. The other caps are generous for what agents write and small enough to keep a scan of many
// projects cheap.
const (
	maxManifestBytes  = 1 << 20
	maxJSONBytes      = 2 << 20
	maxLockBytes      = 64 << 10
	maxLockRawBytes   = 4 << 10
	maxProgressWindow = 64 << 10
	progressTailLines = 20
	maxProgressLine   = 1 << 10
)

// errTooLarge is what readCapped returns for a file over its cap.
type errTooLarge = safefile.SizeError

// readCapped reads a whole regular file of at most limit bytes, never blocking on a special file.
func readCapped(path string, limit int64) ([]byte, os.FileInfo, error) {
	return safefile.Read(path, limit)
}

// readTail reads at most the last window bytes of a regular file. cut reports whether earlier bytes exist.
func readTail(path string, window int64) (data []byte, cut bool, err error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	start := int64(0)
	if st.Size() > window {
		start = st.Size() - window
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, false, err
	}
	data, err = io.ReadAll(io.LimitReader(f, window))
	return data, start > 0, err
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes elided)", len(s)-cut)
}
