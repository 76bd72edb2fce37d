package brief

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"runwatch/model"
)

// ArtifactReport lists artifacts the run recorded (or the config requires) that are not on disk any more.
type ArtifactReport struct {
	LogPath string `json:"log_path,omitempty"`
	// Recorded counts the distinct artifact= paths in run.log `artifact integrity` blocks.
	Recorded int            `json:"recorded"`
	Missing  []ArtifactNote `json:"missing"`
	// Notes say what could not be checked, and how recorded paths were mapped to this machine.
	Notes []string `json:"notes,omitempty"`
}

// ArtifactNote is one missing artifact.
type ArtifactNote struct {
	Stage string `json:"stage"`
	// Path is as recorded; Checked is where it was looked for (differs when the run folder moved).
	Path    string `json:"path"`
	Checked string `json:"checked"`
	// Source is "run.log" or "config".
	Source string `json:"source"`
	// Blocking is true for artifacts of stages already done or recorded as produced: a stop condition. An
	// artifact the current stage has still to produce is listed but does not block.
	Blocking bool `json:"blocking"`
}

// maxScanLine bounds how much of one run.log line the scan keeps; artifact lines are short, and the rest of
// an oversized line is skipped rather than buffered.
const maxScanLine = 64 << 10

var (
	artifactIntegrity = []byte(" artifact integrity")
	artifactKey       = []byte("artifact=")
)

type recordedArtifact struct {
	Stage string `json:"stage"`
	Path  string `json:"path"`
}

// startsEntry reports whether line begins a run.log entry: "[<timestamp>] ...".
func startsEntry(line []byte) bool {
	if len(line) < 3 || line[0] != '[' {
		return false
	}
	end := bytes.IndexByte(line, ']')
	return end > 1 && end < 40 && line[1] >= '0' && line[1] <= '9'
}

// artifactReport finds recorded and configured artifacts that are missing. restartIdx is the index in
// run.Stages of the stage work resumes at (len(Stages) when all are done); the log's index is kept in cache.
func artifactReport(run model.Run, restartIdx int, required map[string][]string, cache IndexCache) ArtifactReport {
	rep := ArtifactReport{}
	rebase := rebaser(run)
	if run.Log != nil && run.Log.Path != "" {
		rep.LogPath = run.Log.Path
		recorded, err := indexes.scanArtifactBlocks(run.Log.Path, cache)
		switch {
		case errors.Is(err, os.ErrNotExist):
			rep.Notes = append(rep.Notes, "run.log "+run.Log.Path+" does not exist, so no recorded artifacts could be checked")
		case err != nil:
			rep.Notes = append(rep.Notes, "run.log "+run.Log.Path+" could not be read to the end ("+err.Error()+"); artifacts after that point were not checked")
		}
		rep.Recorded = len(recorded)
		for _, a := range recorded {
			where := rebase(a.Path)
			if !exists(where) {
				rep.Missing = append(rep.Missing, ArtifactNote{Stage: a.Stage, Path: a.Path, Checked: where,
					Source: "run.log", Blocking: true})
			}
		}
	}
	stageIdx := map[string]int{}
	for i, s := range run.Stages {
		stageIdx[strings.ToUpper(s.Key)] = i
	}
	stages := make([]string, 0, len(required))
	for s := range required {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, stage := range stages {
		i, known := stageIdx[strings.ToUpper(stage)]
		if !known || i > restartIdx {
			continue
		}
		for _, p := range required[stage] {
			where := p
			if !filepath.IsAbs(where) {
				where = filepath.Join(run.Dir, p)
			}
			if !exists(where) && !alreadyListed(rep.Missing, where) {
				rep.Missing = append(rep.Missing, ArtifactNote{Stage: stage, Path: p, Checked: where, Source: "config",
					Blocking: i < restartIdx})
			}
		}
	}
	if base := movedFrom(run); base != "" && rep.Recorded > 0 {
		rep.Notes = append(rep.Notes, "recorded paths under "+base+" were looked for under "+run.Dir+", where the run folder is now")
	}
	return rep
}

func alreadyListed(notes []ArtifactNote, where string) bool {
	for _, n := range notes {
		if n.Checked == where {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// movedFrom returns the recorded location of this run folder (RUN_ROOT or CONTROL_RUN_ROOT) when it names the
// same folder at another place: run folders get copied between machines, and fixtures live elsewhere.
// RUN_ROOT may also legitimately point at a data cache elsewhere (the mining tool), which has another name.
func movedFrom(run model.Run) string {
	if run.Resumable == nil || run.Dir == "" {
		return ""
	}
	for _, key := range []string{"CONTROL_RUN_ROOT", "RUN_ROOT"} {
		v, ok := run.Resumable.Value(key)
		v = filepath.Clean(strings.TrimSpace(v))
		if ok && v != "." && filepath.IsAbs(v) && v != filepath.Clean(run.Dir) && filepath.Base(v) == filepath.Base(run.Dir) {
			return v
		}
	}
	return ""
}

func rebaser(run model.Run) func(string) string {
	from := movedFrom(run)
	return func(p string) string {
		if !filepath.IsAbs(p) {
			return filepath.Join(run.Dir, p)
		}
		if from != "" {
			if rest, ok := strings.CutPrefix(filepath.Clean(p), from+string(filepath.Separator)); ok {
				return filepath.Join(run.Dir, rest)
			}
		}
		// Without RUN_ROOT (a folder that travelled without its state.env) the folder's own name in the
		// recorded path marks where it was.
		if !exists(p) && run.Dir != "" {
			mark := string(filepath.Separator) + filepath.Base(run.Dir) + string(filepath.Separator)
			if i := strings.LastIndex(filepath.Clean(p), mark); i >= 0 {
				return filepath.Join(run.Dir, filepath.Clean(p)[i+len(mark):])
			}
		}
		return p
	}
}
