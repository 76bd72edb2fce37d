package action

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/state/envfile"
	"runwatch/termsafe"
)

// writerStamps are the keys a writer sets on every save of the file that holds them: the mining tool's
// state.py sets LAST_UPDATED_AT_UTC each time it writes state.env (docs/FORMATS.md C.1). A runwatch write to a file
// holding one sets it too, so the file never claims it was last written before runwatch's change. A key the
// file does not hold is not added: its writer does not keep it there.
var writerStamps = []string{"LAST_UPDATED_AT_UTC"}

// stampLayouts are the timestamp spellings seen in the convention's files (docs/FORMATS.md B.3: STARTED_AT_UTC is
// written both ways), tried in order; the first is the mining tool's, used when the old value is in none.
var stampLayouts = []string{
	"2006-01-02T15:04:05Z",
	"20060102T150405Z",
	"2006-01-02T15:04:05.000Z",
	"2006-01-02T15:04:05+00:00",
}

// stampSets is the new value of each writer stamp f holds, in the spelling of its old value (envfile keeps
// the line's quoting). An old value in no known spelling is replaced in the mining tool's, and the plan
// says so.
func (p *Plan) stampSets(path string, f *envfile.File) []model.KV {
	now := p.opts.now().UTC()
	var out []model.KV
	for _, key := range writerStamps {
		old, ok := f.Get(key)
		if !ok {
			continue
		}
		layout, known := stampLayout(strings.TrimSpace(old))
		if !known {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %s held %q, in no timestamp format runwatch knows; it is "+
				"set in the mining tool's %s", filepath.Base(path), key, termsafe.Plain(old, 80), layout))
		}
		out = append(out, model.KV{Key: key, Value: now.Format(layout)})
	}
	return out
}

func stampLayout(v string) (layout string, known bool) {
	for _, l := range stampLayouts {
		if t, err := time.Parse(l, v); err == nil && t.Format(l) == v {
			return l, true
		}
	}
	return stampLayouts[0], false
}
