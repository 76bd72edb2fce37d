package action

import (
	"errors"
	"os"
	"strings"
	"testing"

	"runwatch/state/atomicfile"
)

// Issue 37.15: a plan made with Options.Expect applies only when it starts from the bytes the confirmed
// preview started from; otherwise it is refused, nothing written, saying which file and why.
func TestPlanRefusedWhenItStartsFromOtherBytesThanThePreview(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	statePath := makeResumable(t, root)
	env := fixedEnv()
	o := opts(t, env)
	shown, err := PlanCheck(load(t, statePath, env), "CB_S2_SHADOW_REPORT_WRITTEN", false, o)
	if err != nil {
		t.Fatal(err)
	}
	shown.Close()
	expect := map[string]string{}
	for _, s := range shown.Starts() {
		expect[s.File] = s.SHA256
	}
	if len(expect) == 0 {
		t.Fatal("the preview starts from no file")
	}

	// Another key changes between the preview and the confirmation: the new plan is still valid, but it is
	// not the one shown.
	checklist := strings.TrimSuffix(statePath, "state.env") + "checklist.state.env"
	before := mustRead(t, checklist) + "CB_S2_EXTRA=\"0\"\n"
	mustWrite(t, checklist, before)
	o.Expect = expect
	p, err := PlanCheck(load(t, statePath, env), "CB_S2_SHADOW_REPORT_WRITTEN", false, o)
	var nas *NotAsShownError
	if !errors.As(err, &nas) || !errors.Is(err, atomicfile.ErrChanged) || !isRefusal(err) || !strings.Contains(err.Error(), "checklist.state.env") {
		t.Fatalf("planned from other bytes than the preview's: %v", err)
	}
	if err := Apply(p, ApplyOptions{}); err == nil {
		t.Fatal("a refused plan applied")
	}
	if got := mustRead(t, checklist); got != before {
		t.Fatalf("written after the refusal:\n%s", got)
	}

	// Previewed again and confirmed with nothing changed in between: applied.
	shown, err = PlanCheck(load(t, statePath, env), "CB_S2_SHADOW_REPORT_WRITTEN", false, opts(t, env))
	if err != nil {
		t.Fatal(err)
	}
	shown.Close()
	o.Expect = map[string]string{}
	for _, s := range shown.Starts() {
		o.Expect[s.File] = s.SHA256
	}
	p, err = PlanCheck(load(t, statePath, env), "CB_S2_SHADOW_REPORT_WRITTEN", false, o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := Apply(p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(checklist); !strings.Contains(string(got), `CB_S2_SHADOW_REPORT_WRITTEN="0"`) {
		t.Fatalf("not applied:\n%s", got)
	}
	// A preview of another file set (here: of none) is not this plan's either.
	o.Expect = map[string]string{atomicfile.Hash([]byte("/elsewhere/state.env")): Absent}
	if _, err := PlanCheck(load(t, statePath, env), "CB_S2_SHADOW_REPORT_WRITTEN", true, o); !errors.As(err, &nas) {
		t.Fatalf("a plan of other files than the preview's: %v", err)
	}
}
