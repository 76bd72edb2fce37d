package model

import (
	"reflect"
	"strings"
	"testing"
)

// The mining tool's stages with nothing but LAST_COMPLETED_STAGE → CURRENT_STAGE and checkpoint times: the
// done ones are ordered, verify follows publish, and finalize's place is open, so nothing follows verify.
func TestDeriveStageOrderLeavesWhatEvidenceDoesNotSettle(t *testing.T) {
	ids := []string{"anchor", "extract", "finalize", "ingest", "normalize", "publish", "verify"}
	ev := OrderEvidence{
		Next: []OrderEdge{{A: "publish", B: "verify", Source: "state.env"}},
		Before: []OrderEdge{{A: "ingest", B: "extract", Source: "checkpoints"}, {A: "extract", B: "normalize", Source: "checkpoints"},
			{A: "normalize", B: "anchor", Source: "checkpoints"}, {A: "anchor", B: "publish", Source: "checkpoints"}},
	}
	done := map[string]bool{"ingest": true, "extract": true, "normalize": true, "anchor": true, "publish": true}
	rank := func(id string) int {
		if done[id] {
			return 0
		}
		return 1
	}
	o := DeriveStageOrder(ids, ev, rank)
	if got := strings.Join(o.IDs, " "); got != "ingest extract normalize anchor publish verify finalize" {
		t.Errorf("order %v", o.IDs)
	}
	if !reflect.DeepEqual(o.Uncertain, []string{"finalize"}) {
		t.Errorf("uncertain %v, want only finalize", o.Uncertain)
	}
	if next, ok := o.Next["verify"]; ok {
		t.Errorf("next after verify %q: finalize could come anywhere", next)
	}
	// Only the stated next edge is known: finalize might sit between any two of the others.
	if !reflect.DeepEqual(o.Next, map[string]string{"publish": "verify"}) {
		t.Errorf("next %v", o.Next)
	}
	if o.Source != "evidence" {
		t.Errorf("source %q", o.Source)
	}

	// The config's order names every stage: it settles the whole order, finalize last.
	ev.Chains = []OrderChain{{Source: "config", IDs: []string{"ingest", "extract", "normalize", "anchor", "publish", "verify", "finalize"}}}
	o = DeriveStageOrder(ids, ev, rank)
	if o.Source != "config" || len(o.Uncertain) != 0 || o.Next["verify"] != "finalize" || o.Next["finalize"] != "" {
		t.Errorf("with config: %+v", o)
	}
	if _, ok := o.Next["finalize"]; !ok {
		t.Error("finalize is known to be last")
	}
}

// A next edge places the stage right after its predecessor, so everything known to follow the predecessor
// follows it too; contradicting evidence is ignored and said.
func TestDeriveStageOrderNextEdgesAndConflicts(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	ev := OrderEvidence{
		Next:   []OrderEdge{{A: "a", B: "b", Source: "run.log"}},
		Before: []OrderEdge{{A: "a", B: "c", Source: "run.log"}, {A: "c", B: "d", Source: "run.log"}, {A: "d", B: "a", Source: "checkpoints"}},
	}
	o := DeriveStageOrder(ids, ev, nil)
	if got := strings.Join(o.IDs, " "); got != "a b c d" || len(o.Uncertain) != 0 {
		t.Errorf("order %v uncertain %v", o.IDs, o.Uncertain)
	}
	if o.Next["b"] != "c" || o.Next["c"] != "d" || o.Next["d"] != "" {
		t.Errorf("next %v", o.Next)
	}
	if len(o.Conflicts) != 1 || !strings.Contains(o.Conflicts[0], "d before a") {
		t.Errorf("conflicts %v", o.Conflicts)
	}
}

func TestMatchStageOrder(t *testing.T) {
	rules := []StageOrderRule{
		{Pattern: "iso26262-mining-*", Stages: []string{"ingest", "verify"}},
		{Pattern: "iso26262-*", Stages: []string{"ingest", "verify"}},
		{Pattern: "other", Stages: []string{"x"}},
	}
	if r, ok, amb := MatchStageOrder(rules, "iso26262-mining", "iso26262-mining-20260215T143525Z"); !ok || amb != nil || r.Pattern != "iso26262-mining-*" {
		t.Errorf("match %+v %v %v", r, ok, amb)
	}
	rules[1].Stages = []string{"verify", "ingest"}
	if _, ok, amb := MatchStageOrder(rules, "iso26262-mining-1"); ok || len(amb) != 2 {
		t.Errorf("two disagreeing matches must settle nothing: ok %v ambiguous %v", ok, amb)
	}
}
