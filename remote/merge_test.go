package remote

import (
	"maps"
	"testing"

	"runwatch/model"
	"runwatch/watch"
)

// TestMergeEqualsApplyingInOrder: updates merged into one (as the dashboard takes the batches that waited
// while it drew) apply as the same updates one after the other, and two hosts' runs of the same path stay
// apart (Removed and the merge go by Run.Key).
func TestMergeEqualsApplyingInOrder(t *testing.T) {
	run := func(host, path, title string) model.Run {
		return model.Run{StatePath: path, Title: title, Remote: &model.RemoteRef{Host: host}}
	}
	key := func(host, path string) string { return model.RemoteKey(host, path) }
	apply := func(held map[string]model.Run, u Update) {
		for _, r := range u.Changed { // the dashboard's order: changed, then removed (ui.applyBatch)
			held[r.Key()] = *r
		}
		for _, k := range u.Removed {
			delete(held, k)
		}
	}
	updates := []Update{
		{Update: watch.Update{Changed: model.RunPointers([]model.Run{run("h1", "/r/a", "1"), run("h2", "/r/a", "1"), run("h1", "/r/b", "1")})}},
		{Update: watch.Update{Removed: []string{key("h1", "/r/a")}}},
		{Update: watch.Update{Changed: model.RunPointers([]model.Run{run("h2", "/r/a", "2")}), Removed: []string{key("h1", "/r/b")}}},
		{Update: watch.Update{Changed: model.RunPointers([]model.Run{run("h1", "/r/a", "3"), run("h1", "/r/b", "3")})}},
		{Update: watch.Update{Removed: []string{key("h1", "/r/b")}}},
		{Update: watch.Update{Changed: model.RunPointers([]model.Run{run("h1", "/r/c", "5")})}},
	}
	for from := range updates {
		for to := from + 1; to <= len(updates); to++ {
			one, merged := map[string]model.Run{}, map[string]model.Run{}
			for _, u := range updates[:from] {
				apply(one, u)
				apply(merged, u)
			}
			for _, u := range updates[from:to] {
				apply(one, u)
			}
			var m Update
			for i, u := range updates[from:to] {
				if i == 0 {
					m = u
					m.Changed = append([]*model.Run(nil), u.Changed...)
					m.Removed = append([]string(nil), u.Removed...)
					continue
				}
				m.Merge(u)
			}
			apply(merged, m)
			if !maps.EqualFunc(one, merged, func(a, b model.Run) bool { return a.Title == b.Title }) {
				t.Errorf("updates %d to %d: one by one %v, merged %v", from, to-1, titles(one), titles(merged))
			}
		}
	}
}

func titles(m map[string]model.Run) map[string]string {
	out := map[string]string{}
	for k, r := range m {
		out[k] = r.Title
	}
	return out
}
