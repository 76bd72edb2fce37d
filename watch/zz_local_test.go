package watch

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestZZTreeShape(t *testing.T) {
	tr := newTree(nil, true, false)
	tr.ensure("/work/perf/idle-ws/runs-10000", 4, nil)
	kinds := map[string][2]int{}
	for p, n := range tr.dirs {
		k := filepath.Base(p)
		if strings.HasPrefix(k, "generated-task") || strings.HasPrefix(k, "feat") {
			k = "<run-ish>"
		}
		if filepath.Base(filepath.Dir(p)) == "repos" {
			k = "repos/<x>"
		}
		v := kinds[k]
		v[0]++
		v[1] += len(n.entries)
		kinds[k] = v
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return kinds[ks[i]][0] > kinds[ks[j]][0] })
	tot := 0
	for _, k := range ks[:min(25, len(ks))] {
		t.Logf("%-30s dirs %6d entries %7d", k, kinds[k][0], kinds[k][1])
	}
	for _, k := range ks {
		tot += kinds[k][1]
	}
	t.Logf("dirs %d entries %d", len(tr.dirs), tot)
}
