package action

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"runwatch/model"
	"runwatch/state/atomicfile"
	"runwatch/state/envfile"
	"runwatch/state/journal"
	"runwatch/state/yamledit"
	"runwatch/termsafe"
)

// A writer that takes no lock (state_tool.py update: temp file, rename) can land its rename between Apply's
// last check and its rename. atomicfile.Replace then finds the writer's file at the rename and puts it back
// at once (Displaced.PutBack). What is left to do is here: apply the same edit to the writer's bytes and
// replace again against them, or, when the edit no longer applies to them (the item changed, the stage
// moved), leave the writer's file in place and say that the action was not applied. Either way the writer's
// update stays, and what happened is said in Plan.Raced, the journal entry and the error.

// redoAttempts bounds how many times the edit is made again on a writer's newer bytes: a writer that lands
// in every window is told about rather than chased.
const redoAttempts = 4

// redoFunc is a plan's edit made on other bytes than it was planned from: the new bytes, or a *Refused
// saying why the edit no longer applies to them.
type redoFunc func(cur []byte) ([]byte, error)

// PutBackError means the action was not applied: a writer that takes no lock replaced a file between
// runwatch's last check and its rename; its file was put back at once, and runwatch's edit no longer
// applies to it (or the writer kept landing). Nothing of the action remains; runwatch's bytes were in place
// for Visible.
type PutBackError struct {
	Path    string
	Why     string
	Visible time.Duration
}

func (e *PutBackError) Error() string {
	return fmt.Sprintf("not applied: another writer replaced %s between runwatch's last check and its rename; its version was put back at once "+
		"(runwatch's was in place for %s) and is kept: %s; look at the run again and plan anew", e.Path, e.Visible, e.Why)
}

// Is lets errors.Is(err, atomicfile.ErrChanged) match: the file changed on disk, and nothing of ours stayed.
func (e *PutBackError) Is(target error) bool { return target == atomicfile.ErrChanged }

// redoRaced settles file i after the writer's file was put back over ours (d): the same edit is made on
// what the file holds now and replaced against exactly those bytes (the intent is rewritten first, so a crash
// is recovered against the bytes really written), up to redoAttempts times. It returns the Displaced of a
// last replace that could not be put back (then ours stands over the writer's, reported as before), or the
// error that leaves the action not applied.
func (p *Plan) redoRaced(jp string, in *journal.Intent, i int, d *atomicfile.Displaced) (*atomicfile.Displaced, error) {
	f := &p.Files[i]
	visible := d.Visible
	why := fmt.Sprintf("%s is made only on the bytes it was planned from", p.Action)
	for attempt := 0; attempt < redoAttempts && f.redo != nil; attempt++ {
		cur, snap, err := p.root.Read(f.Path)
		if err != nil {
			return nil, err
		}
		if !snap.Exists {
			why = "it was removed"
			break
		}
		next, err := f.redo(cur)
		if err == nil {
			err = recheckWhole(FileChange{Path: f.Path, Old: cur, New: next})
		}
		if err != nil {
			why = strings.TrimSuffix(err.Error(), "; nothing was written")
			break
		}
		rec := &in.Entry.Files[i]
		rec.OldSHA256, rec.Old, rec.NewSHA256 = snap.SHA256, cur, atomicfile.Hash(next)
		rec.Temp = atomicfile.NewTempName(filepath.Base(f.Path))
		if err := journal.WriteIntent(jp, *in); err != nil {
			return nil, fmt.Errorf("the journal's intent could not be rewritten for the writer's newer %s, so nothing was changed: %w", f.Path, err)
		}
		d2, err := p.root.Replace(snap, next, rec.Temp)
		if err != nil && !isChanged(err) {
			return nil, err
		}
		if err == nil && d2 != nil && d2.PutBack {
			visible += d2.Visible
		}
		if err != nil || d2 != nil && d2.PutBack {
			why = "the writer kept changing it"
			continue // the writer wrote again: its file is in place; make the edit on that
		}
		f.Snap, f.Old, f.New = snap, cur, next
		p.Raced = append(p.Raced, fmt.Sprintf("another writer replaced %s between runwatch's last check and its rename; its version was put back "+
			"at once (runwatch's was in place for %s) and the same edit was made on it", f.Path, visible))
		return d2, nil
	}
	return nil, &PutBackError{Path: f.Path, Why: why, Visible: visible}
}

func isChanged(err error) bool {
	_, ok := err.(*atomicfile.ChangedError)
	return ok
}

// envRedo is an env file edit (sets, on the file as planned, old) made on a writer's newer bytes: the same
// keys set to the same values, only where each still holds the value the plan read (otherwise the item
// changed or the stage moved, and the edit no longer applies). A writer stamp the writer set later than
// ours is kept.
func envRedo(path string, old *envfile.File, sets []model.KV) redoFunc {
	type was struct {
		v  string
		ok bool
	}
	before := map[string]was{}
	for _, s := range sets {
		v, ok := old.Get(s.Key)
		before[s.Key] = was{v, ok}
	}
	return func(cur []byte) ([]byte, error) {
		f, err := parseEnv(path, cur)
		if err != nil {
			return nil, err
		}
		var redo []model.KV
		for _, s := range sets {
			v, ok := f.Get(s.Key)
			if isWriterStamp(s.Key) {
				if laterStamp(v, s.Value) {
					continue
				}
			} else if w := before[s.Key]; ok != w.ok || v != w.v {
				return nil, refusef("%s is now %s, not %s as planned", s.Key, shown(v, ok), shown(w.v, w.ok))
			}
			redo = append(redo, s)
		}
		return editEnv(path, f, redo)
	}
}

func shown(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%q", termsafe.Plain(v, 40))
}

func isWriterStamp(key string) bool {
	for _, k := range writerStamps {
		if k == key {
			return true
		}
	}
	return false
}

// laterStamp reports whether the writer's stamp theirs is later than ours (both in a known spelling).
func laterStamp(theirs, ours string) bool {
	lt, ok1 := stampLayout(strings.TrimSpace(theirs))
	lo, ok2 := stampLayout(strings.TrimSpace(ours))
	if !ok1 || !ok2 {
		return false
	}
	tt, _ := time.Parse(lt, strings.TrimSpace(theirs))
	to, _ := time.Parse(lo, strings.TrimSpace(ours))
	return tt.After(to)
}

// yamlRedo is a manifest edit made on a writer's newer bytes: the same paths set to the same values, only
// where each still holds what the plan read; the writer's updated_at is kept when it is later than ours.
func yamlRedo(old *yaml.Node, out []yamledit.Edit) redoFunc {
	return func(cur []byte) ([]byte, error) {
		root, err := yamledit.Parse(cur)
		if err != nil {
			return nil, refusef("it does not parse: %v", err)
		}
		var redo []yamledit.Edit
		for _, e := range out {
			was, now := yamledit.Lookup(old, e.Path...), yamledit.Lookup(root, e.Path...)
			if len(e.Path) == 1 && e.Path[0] == "updated_at" {
				if now != nil && now.Kind == yaml.ScalarNode && laterMS(now.Value, e.Value.String()) {
					continue
				}
			} else if !sameScalar(was, now) {
				return nil, refusef("%s is now %s, not %s as planned", strings.Join(e.Path, "."), scalarShown(now), scalarShown(was))
			}
			redo = append(redo, e)
		}
		return yamledit.Apply(cur, redo)
	}
}

func sameScalar(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == yaml.ScalarNode && b.Kind == yaml.ScalarNode && a.ShortTag() == b.ShortTag() && a.Value == b.Value
}

func scalarShown(n *yaml.Node) string {
	switch {
	case n == nil:
		return "absent"
	case n.Kind != yaml.ScalarNode:
		return "not a single value"
	}
	return fmt.Sprintf("%q", termsafe.Plain(n.Value, 40))
}

func laterMS(theirs, ours string) bool {
	tt, err1 := time.Parse(time.RFC3339Nano, theirs)
	to, err2 := time.Parse(time.RFC3339Nano, ours)
	return err1 == nil && err2 == nil && tt.After(to)
}
