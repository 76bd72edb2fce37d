package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The stages of the mining tool's run as its state.env lists them (sorted keys, so alphabetical).
var miningStages = []string{"anchor", "extract", "finalize", "ingest", "normalize", "publish", "verify"}

const miningOrder = "ingest, extract, normalize, anchor, publish, verify, finalize"

// The mining run's plan, with the two lines docs/FORMATS.md C.1 quotes from the real one among its usual text.
func TestOrderFromTheMiningPlan(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "testdata", "resumable-c1", "repo", "plans",
		"2026-02-15-hierarchical-pdf-mining-corpus-plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	o := OrderFromPlan(string(text), miningStages)
	if got := strings.Join(o.IDs, ", "); got != miningOrder || o.Conflict != "" {
		t.Fatalf("order %q conflict %q", got, o.Conflict)
	}
	if o.Where() != "lines 27, 35–41 and 57" {
		t.Errorf("places %q", o.Places)
	}
	// The run spells its stages as it likes; the plan's words match them in any case.
	o = OrderFromPlan(string(text), []string{"ANCHOR", "Extract", "finalize", "ingest", "normalize", "publish", "verify"})
	if got := strings.Join(o.IDs, ", "); got != "ingest, Extract, normalize, ANCHOR, publish, verify, finalize" {
		t.Errorf("spelled as the run spells them: %q", got)
	}
	// A stage the plan never names in those lines leaves the order open: every stage must be named.
	if o := OrderFromPlan(string(text), append([]string{"dedupe"}, miningStages...)); o.IDs != nil {
		t.Errorf("a stage the plan does not name: %+v", o)
	}
}

func TestOrderFromPlanShapes(t *testing.T) {
	for _, tc := range []struct {
		name, plan, want, where, conflict string
	}{
		{name: "numbered list", plan: "## Stages\n\n1. `ingest` — hash the PDFs\n2. **Extract**: page text\n   (slow: about an hour)\n" +
			"3. normalize units\n4. anchor\n5. Stage 5: publish\n6. verify\n7. finalize\n\nThen stop.\n",
			want: miningOrder, where: "lines 3–10"},
		{name: "bulleted list with items that name no stage", plan: "Pipeline:\n- preflight checks\n- ingest\n- extract\n" +
			"- normalize\n- anchor\n  - writes anchor-text-links.jsonl\n- publish\n- verify\n- finalize\n",
			want: miningOrder, where: "lines 3–10"},
		{name: "task list, nested, with items after the stages", plan: "- [ ] Lock subcommands and sequence.\n  - [ ] `ingest`.\n" +
			"  - [ ] `extract`.\n  - [x] `normalize`.\n  - [ ] `anchor`.\n  - [ ] `publish`.\n  - [ ] `verify`.\n  - [ ] `finalize`.\n" +
			"  - [ ] `replay`.\n- [ ] Lock common CLI arguments.\n", want: miningOrder, where: "lines 2–8"},
		{name: "one line with joiners", plan: "We run ingest, extract, normalize, anchor, publish, verify and then finalize.\n",
			want: miningOrder, where: "line 1"},
		{name: "arrows, CRLF", plan: "intro\r\ningest → extract → normalize → anchor → publish → verify → finalize\r\n",
			want: miningOrder, where: "line 2"},
		{name: "prose only", plan: "First we ingest the PDFs and extract their text, which we normalize into units; we anchor each\n" +
			"unit, publish the index, verify what was published and finally finalize the report.\n" +
			"Anchoring needs normalized units, and the publish stage runs after anchor.\n"},
		{name: "prose on one line", plan: "We ingest the PDFs, extract the text, normalize it, anchor the units, publish them, verify and finalize.\n"},
		{name: "not at all", plan: "# Plan\n\nMine the corpus. Keep `CURRENT_STAGE` and `S_VERIFY_DONE` up to date.\n"},
		{name: "some stages only", plan: "(`ingest`, `extract`, `normalize`, `anchor`)\n"},
		{name: "a stage named twice in the line", plan: "ingest -> extract -> normalize -> anchor -> publish -> verify -> finalize -> ingest\n"},
		{name: "two conflicting orders", plan: "Order: (`ingest`, `extract`, `normalize`, `anchor`, `publish`, `verify`, `finalize`)\n\n" +
			"Later:\n1. ingest\n2. extract\n3. normalize\n4. publish\n5. anchor\n6. verify\n7. finalize\n",
			conflict: "line 1 names ingest, extract, normalize, anchor, publish, verify, finalize but lines 4–10 names " +
				"ingest, extract, normalize, publish, anchor, verify, finalize"},
		{name: "two agreeing places", plan: "1. ingest\n2. extract\n3. normalize\n4. anchor\n5. publish\n6. verify\n7. finalize\n\n" +
			"Recap: ingest -> extract -> normalize -> anchor -> publish -> verify -> finalize\n",
			want: miningOrder, where: "lines 1–7 and 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := OrderFromPlan(tc.plan, miningStages)
			if got := strings.Join(o.IDs, ", "); got != tc.want || o.Where() != tc.where || o.Conflict != tc.conflict {
				t.Errorf("order %q where %q conflict %q\nwant  %q where %q conflict %q", got, o.Where(), o.Conflict,
					tc.want, tc.where, tc.conflict)
			}
		})
	}
	if o := OrderFromPlan("ingest -> extract", []string{"ingest"}); o.IDs != nil {
		t.Errorf("one stage has no order to prove: %+v", o)
	}
}

// A chain from a plan (Checked) settles the order unless a Next edge, or a Before edge that does not come
// from times alone, contradicts it; then it is named among the conflicts and the evidence orders what it can.
func TestDeriveStageOrderCheckedChain(t *testing.T) {
	plan := OrderChain{Source: "plan", IDs: strings.Split(miningOrder, ", "), Checked: true, Says: "order from the plan p.md, line 3"}
	for _, tc := range []struct {
		name string
		ev   OrderEvidence
		used bool
		why  string
	}{
		{name: "alone", used: true},
		{name: "agreeing log", ev: OrderEvidence{Next: []OrderEdge{{A: "anchor", B: "publish", Source: "run.log"}},
			Before: []OrderEdge{{A: "ingest", B: "verify", Source: "run.log"}}}, used: true},
		{name: "checkpoint times that invert", ev: OrderEvidence{Before: []OrderEdge{{A: "normalize", B: "extract", Source: "checkpoints", Weak: true}}}, used: true},
		{name: "a next edge", ev: OrderEvidence{Next: []OrderEdge{{A: "normalize", B: "publish", Source: "state.env"}}},
			why: "order from the plan p.md, line 3 is not used: state.env says publish comes right after normalize"},
		{name: "a log order", ev: OrderEvidence{Before: []OrderEdge{{A: "publish", B: "anchor", Source: "run.log"}}},
			why: "order from the plan p.md, line 3 is not used: run.log says publish comes before anchor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			ev.Chains = []OrderChain{plan}
			o := DeriveStageOrder(miningStages, ev, nil)
			if tc.used {
				if o.Source != "plan" || strings.Join(o.IDs, ", ") != miningOrder || o.Next["anchor"] != "publish" ||
					len(o.Evidence) != 1 || o.Evidence[0] != plan.Says {
					t.Errorf("%+v", o)
				}
				return
			}
			if o.Source == "plan" || len(o.Conflicts) == 0 || o.Conflicts[0] != tc.why {
				t.Errorf("source %s conflicts %q", o.Source, o.Conflicts)
			}
			if _, ok := o.Next["anchor"]; ok {
				t.Errorf("a successor of anchor from a plan that was not used: %v", o.Next)
			}
		})
	}
}

// FuzzOrderFromPlan: any plan text, never a panic; an order found is every stage once, and never beside a
// conflict.
func FuzzOrderFromPlan(f *testing.F) {
	f.Add("1. ingest\n2. extract\n3. normalize\n4. anchor\n5. publish\n6. verify\n7. finalize\n")
	f.Add("(`ingest`, `extract`, `normalize`, `anchor`, `publish`, `verify`, `finalize`)\n- Stage 1: ingest\n\t* x\n")
	f.Add("ingest → extract\r\n  - ingest\n  - extract\n- anchor\n10) publish verify finalize\n")
	f.Fuzz(func(t *testing.T, plan string) {
		o := OrderFromPlan(plan, miningStages)
		if o.IDs == nil {
			if len(o.Places) != 0 {
				t.Fatalf("places without an order: %+v", o)
			}
			return
		}
		if o.Conflict != "" || len(o.Places) == 0 || len(o.IDs) != len(miningStages) {
			t.Fatalf("%+v", o)
		}
		seen := map[string]bool{}
		for _, id := range o.IDs {
			if seen[id] {
				t.Fatalf("%s twice: %+v", id, o)
			}
			seen[id] = true
		}
	})
}
