package runlog

import (
	"bytes"
	"fmt"
	"os"

	"runwatch/model"
)

const (
	// tailChunk is the unit of the backwards read.
	tailChunk = 64 << 10
	// stampProbe is how many bytes after a line start are enough to recognise `[timestamp]`.
	stampProbe = 48
	// The backwards scan stops early when entries are huge (an entry with millions of continuation lines, or
	// no newline for a GiB): past tailKeptBudget bytes of text as it will be kept (capped lines), or
	// tailScanBudget bytes of file, the tail starts at a line boundary inside an entry, shown as an entry
	// without time. A single long line costs scanning, not memory.
	tailKeptBudget = 16 << 20
	tailScanBudget = 256 << 20
)

// ReadTail returns the last maxEntries entries of the log at path and the file size they were read up to.
// Follow from that size (NewFollower) to get what comes after. It reads backwards from the end in 64 KiB
// chunks only until enough entry starts are found, then parses forward from there, so time and memory
// depend on the tail, not the log. A last line without a newline is returned as a (complete) entry: a
// writer that died mid-line leaves exactly that, and it must be visible. If the writer was only mid-line,
// the rest of that line reaches the follower as a continuation line of it (Append merges it). Non-regular
// files are refused.
func ReadTail(path string, maxEntries int) ([]model.LogEntry, int64, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	size := fi.Size()
	if maxEntries <= 0 || size == 0 {
		return nil, size, nil
	}
	start, err := tailStart(f, size, maxEntries)
	if err != nil {
		return nil, size, fmt.Errorf("%s: %w", path, err)
	}
	entries, err := parseRange(f, start, size)
	if err != nil {
		return nil, size, fmt.Errorf("%s: %w", path, err)
	}
	return entries, size, nil
}

// tailStart finds the offset of the maxEntries-th entry start counted from the end of [0, size).
func tailStart(f *os.File, size int64, maxEntries int) (int64, error) {
	buf := make([]byte, tailChunk+stampProbe)
	found := 0
	lowest := int64(-1) // lowest line start seen, the fallback when the budget runs out
	kept := 0           // bytes the lines below lowest will keep once capped
	above := size       // start of the line below the newline being looked at
	for hi := size; hi > 0; {
		lo := max(0, hi-tailChunk)
		n, err := readFull(f, buf[:min(size, hi+stampProbe)-lo], lo)
		if err != nil {
			return 0, err
		}
		data := buf[:n]
		end := min(int(hi-lo), n)
		for {
			j := bytes.LastIndexByte(data[:end], '\n')
			if j < 0 {
				break
			}
			end = j
			ls := lo + int64(j) + 1
			if ls >= size {
				continue // the newline that ends the file starts no line
			}
			lowest = ls
			kept += int(min(above-ls, MaxLineBytes+64))
			above = ls
			if hasStamp(data[j+1:]) {
				found++
				if found == maxEntries {
					return ls, nil
				}
			}
		}
		if lo == 0 {
			return 0, nil
		}
		hi = lo
		if size-hi >= tailScanBudget || kept >= tailKeptBudget {
			if lowest >= 0 {
				return lowest, nil
			}
			return hi, nil
		}
	}
	return 0, nil
}

// hasStamp reports whether the line starting at b[0] starts an entry, looking at its first bytes only.
func hasStamp(b []byte) bool {
	if len(b) == 0 || b[0] != '[' {
		return false
	}
	b = b[:min(len(b), stampProbe)]
	if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
		b = b[:nl]
	}
	_, _, ok := splitStamp(string(b))
	return ok
}

// parseRange parses [start, end) of f in tailChunk pieces; a last line without newline becomes an entry.
func parseRange(f *os.File, start, end int64) ([]model.LogEntry, error) {
	s := newStream(start)
	buf := make([]byte, tailChunk)
	for off := start; off < end; {
		n, err := readFull(f, buf[:min(int64(len(buf)), end-off)], off)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break // the file shrank under us; what was read stands
		}
		s.feed(buf[:n])
		off += int64(n)
	}
	s.finishPartial()
	return s.take(), nil
}
