package sim

import "testing"

// The simulator's later features finish in seconds; were one of the orphaned docs fix's work type, its phases
// would become that run's history, and its "usually 40s (1 run)" and ETA would turn to seconds as the demo
// runs on.
func TestLaterFeaturesShareNoWorkTypeWithTheOrphanedRun(t *testing.T) {
	for _, f := range laterFeatures {
		if f.WorkType == docsFeature.WorkType {
			t.Errorf("later feature %q is a %s, as the orphaned docs fix is", f.Description, f.WorkType)
		}
	}
}
