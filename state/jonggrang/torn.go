package jonggrang

import (
	"fmt"
	"strings"
)

// requiredValidation are the flags createManifest writes under validation, all false at creation; later
// writes (updateValidation's Object.assign) add to them but never remove one.
var requiredValidation = []string{"review_passed", "tests_passed", "coverage_met"}

// TornReasons reports why MANIFEST.yaml bytes that parse as YAML look like a prefix of a whole manifest
// rather than the manifest itself. The convention's writer truncates the file and rewrites it in place
// (writeFileSync: no temp file, no lock), so a reader can see the first part of the new content, cut at a
// line end, which is still valid YAML. createManifest writes every key below from the start, in this order,
// so a cut anywhere before the end of validation leaves one of these marks:
//
//   - no status, or no phases (the cut is near the top);
//   - active_phases names a phase that phases lacks (the cut is inside phases);
//   - agents is missing (the cut is inside the last phase entry or just after phases);
//   - validation is missing, or lacks one of review_passed, tests_passed, coverage_met (the cut is inside
//     agents or validation).
//
// An empty result means the bytes look whole. Bytes that are not YAML at all also give an empty result:
// they are a different problem (manifest-unparsable), found by parsing. A read with reasons must be read
// again after a short wait; if it stays that way the run carries the error problem model.CodeManifestTorn,
// and no action may plan an edit from such bytes.
func TornReasons(data []byte) []string {
	m, err := parseManifest(data)
	if err != nil {
		return nil
	}
	return m.tornReasons()
}

func (m *manifest) tornReasons() []string {
	var why []string
	if m.Status == "" {
		why = append(why, "it has no status")
	}
	if !m.PhasesPresent {
		why = append(why, "it has no phases")
	} else if missing := m.activeWithoutEntry(); len(missing) > 0 {
		why = append(why, fmt.Sprintf("active_phases lists %s, which phases lacks", strings.Join(limit(missing, 8), ", ")))
	}
	if !m.AgentsPresent {
		why = append(why, "agents is missing")
	}
	switch {
	case !m.ValidationPresent:
		why = append(why, "validation is missing")
	default:
		var lacks []string
		for _, name := range requiredValidation {
			found := false
			for _, f := range m.Validation {
				found = found || f.Name == name
			}
			if !found {
				lacks = append(lacks, name)
			}
		}
		if len(lacks) > 0 {
			why = append(why, "validation lacks "+strings.Join(lacks, ", "))
		}
	}
	return why
}

// activeWithoutEntry lists the active phases that have no entry under phases. A phase matches by its key as
// written (YAML's 10 and '10' are both "10"), through one index, so a manifest of 20,000 phases costs
// 20,000 lookups, not 400 million comparisons.
func (m *manifest) activeWithoutEntry() []string {
	keys := make(map[string]bool, len(m.Phases))
	for _, s := range m.Phases {
		keys[s.Key] = true
	}
	var missing []string
	for _, a := range m.ActivePhases {
		if !keys[a] {
			missing = append(missing, a)
		}
	}
	return missing
}
