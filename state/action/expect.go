package action

import (
	"fmt"
	"sort"

	"runwatch/state/atomicfile"
)

// Absent is a file's digest in Expect and Starts when the plan found no such file (one it creates).
const Absent = "absent"

// Start is a file a plan starts from: its path, File (the SHA-256 of the path's bytes, which names it in
// Options.Expect whatever bytes the path holds) and SHA256, that of its bytes when planned, or Absent.
type Start struct {
	Path   string `json:"path"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// Starts is what the plan starts from, file by file, in path order: what a preview shown elsewhere hands back
// as Options.Expect (File → SHA256) with the confirmation, so the plan made then applies only to the same
// bytes.
func (p *Plan) Starts() []Start {
	out := make([]Start, 0, len(p.Files))
	for _, f := range p.Files {
		out = append(out, Start{Path: f.Path, File: atomicfile.Hash([]byte(f.Path)), SHA256: startDigest(f.Snap)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func startDigest(s atomicfile.Snapshot) string {
	if !s.Exists {
		return Absent
	}
	return s.SHA256
}

// NotAsShownError refuses a plan that starts from other bytes than the preview the person confirmed
// (Options.Expect): what would be applied is not what was shown. Nothing was written.
type NotAsShownError struct {
	Path   string
	Detail string
}

func (e *NotAsShownError) Error() string {
	return fmt.Sprintf("%s is not what the preview you confirmed started from (%s); nothing was written: look at the change again", e.Path, e.Detail)
}

// Is lets errors.Is(err, atomicfile.ErrChanged) match: the file changed since the person looked.
func (e *NotAsShownError) Is(target error) bool { return target == atomicfile.ErrChanged }

// checkExpect holds the plan to Options.Expect: the same files, each with the bytes previewed.
func (p *Plan) checkExpect() error {
	want := p.opts.Expect
	if want == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range p.Starts() {
		seen[s.File] = true
		w, ok := want[s.File]
		switch {
		case !ok:
			return &NotAsShownError{Path: s.Path, Detail: "the preview did not change it"}
		case w == s.SHA256:
		case w == Absent:
			return &NotAsShownError{Path: s.Path, Detail: "it was absent then and exists now"}
		case s.SHA256 == Absent:
			return &NotAsShownError{Path: s.Path, Detail: "it is gone"}
		default:
			return &NotAsShownError{Path: s.Path, Detail: "its bytes differ"}
		}
	}
	for file := range want {
		if !seen[file] {
			return &NotAsShownError{Path: "a file the preview changed", Detail: "this plan does not change it"}
		}
	}
	return nil
}
