package status

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"runwatch/jsonindent"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/termsafe"
)

// Formats and Sorts are the output formats and the orders of the runs status writes (--output, --sort).
var (
	Formats = []string{"table", "wide", "json", "jsonl"}
	Sorts   = []string{"attention", "name", "id", "updated", "path"}
)

// snapshot builds the status --json document. Runs are ordered by directory so output is stable for scripts.
func Snapshot(runs []model.Run, env model.Env) model.Snapshot {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Key() < runs[j].Key() })
	for i := range runs {
		fillEmptyLists(&runs[i])
	}
	host := env.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	return model.Snapshot{Schema: model.SchemaVersion, GeneratedAt: env.Now.UTC(), Host: host, Protocol: remote.ProtocolVersion, Runs: runs}
}

// WriteSnapshotJSON writes what json.Encoder with a two-space indent writes for snap, through
// termsafe.JSON, encoding the runs on every core: with a thousand runs, encoding and indenting the
// document costs as much as reading the runs did.
func WriteSnapshotJSON(w io.Writer, snap model.Snapshot) error {
	if len(snap.Runs) == 0 {
		b, err := json.MarshalIndent(snap, "", "  ")
		if err == nil {
			_, err = w.Write(termsafe.JSON(append(b, '\n')))
		}
		return err
	}
	runs := snap.Runs
	snap.Runs = []model.Run{}
	head, err := documentHead(snap)
	if err != nil {
		return err
	}
	parts := make([][]byte, len(runs))
	errs := make([]error, len(runs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(runs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(runs) {
					return
				}
				// json.MarshalIndent would compact and check Run.MarshalJSON's output before indenting it:
				// a copy of every byte that json.Marshal has already written compact and escaped.
				b, err := runs[i].MarshalJSON()
				if err == nil {
					b = jsonindent.Append(make([]byte, 0, 2*len(b)), b, "    ", "  ") // indented runs come to about 1.65x
				}
				parts[i], errs[i] = termsafe.JSON(b), err
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(termsafe.JSON(head))
	bw.WriteString("[\n")
	for i, p := range parts {
		bw.WriteString("    ")
		bw.Write(p)
		if i < len(parts)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// documentHead is the status document with no runs, cut before the runs array's closing bracket: both
// writers put the runs there, one level in, each encoded on its own.
func documentHead(snap model.Snapshot) ([]byte, error) {
	snap.Runs = []model.Run{}
	doc, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return nil, err
	}
	// The document ends `"runs": []` and `}`.
	doc, ok := bytes.CutSuffix(doc, []byte("[]\n}"))
	if !ok {
		return nil, fmt.Errorf("status --json: unexpected document shape %q", doc)
	}
	return doc, nil
}
