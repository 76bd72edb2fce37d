package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/config"
	"runwatch/model"
	"runwatch/state"
	"runwatch/state/brief"
	"runwatch/state/fixturetest"
)

// runwatch brief RUN learns the task's history from the runs of the configured roots, as the dashboard
// does: the built program's brief, by id and by folder, Markdown and JSON, has the Time line the dashboard's
// brief of that run has, with the usual length and the ETA from the task's past runs.
func TestBriefOnTheRealBinaryHasTheTasksHistory(t *testing.T) {
	t.Parallel()
	bin := buildRunwatch(t)
	root := t.TempDir()
	// The stage started 3 days and 30 minutes ago: its "has run 3d0h" reads the same for half an hour.
	now := time.Now()
	for i, s2 := range []time.Duration{4 * time.Minute, 5 * time.Minute, 6 * time.Minute} {
		fixturetest.TaskRun(t, root, fmt.Sprintf("brieftask-2026110%dT000000Z", i+1), "brief-task", now.Add(-time.Duration(10+i)*24*time.Hour),
			2*time.Minute, s2, 4*time.Minute)
	}
	// Another task's run, whose S2 took an hour: not this task's history.
	fixturetest.TaskRun(t, root, "othertask-20261101T000000Z", "other-task", now.Add(-9*24*time.Hour), 2*time.Minute, time.Hour, time.Minute)
	live := fixturetest.TaskRun(t, root, "brieftask-20261130T000000Z", "brief-task", now.Add(-3*24*time.Hour-35*time.Minute), 5*time.Minute)
	// Jonggrang: two MEDIUM features whose phase 14 took 7m and 9m, a SMALL one (20m), and a MEDIUM feature
	// in phase 14 since 3 days.
	fixturetest.Feature(t, root, "feat-a", "MEDIUM", now.Add(-10*24*time.Hour), 3*time.Minute, 7*time.Minute)
	fixturetest.Feature(t, root, "feat-b", "medium", now.Add(-9*24*time.Hour), 3*time.Minute, 9*time.Minute)
	fixturetest.Feature(t, root, "feat-c", "SMALL", now.Add(-8*24*time.Hour), 3*time.Minute, 20*time.Minute)
	feature := fixturetest.Feature(t, root, "feat-live", "MEDIUM", now.Add(-3*24*time.Hour-33*time.Minute), 3*time.Minute, 0)
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("roots: ["+root+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The dashboard's brief of the run: every run of the roots read, judged with what all of them say.
	conf, err := config.Load(cfg, testEnv(t).getenv)
	if err != nil {
		t.Fatal(err)
	}
	env := envFor(conf)
	locs, err := state.Discover([]string{root}, 0)
	if err != nil {
		t.Fatal(err)
	}
	runs := fixturetest.LoadAll(locs, env)
	judgeTimes(runs, env.Now, env.Liveness)
	var want, wantFeature string
	for _, r := range runs {
		switch r.Dir {
		case live:
			want = brief.Build(r, env).Time
		case feature:
			wantFeature = brief.Build(r, env).Time
		}
	}
	if want != "stage S2 started 3d0h ago and is blocked; it usually takes 4m–5m (3 runs)" {
		t.Fatalf("the dashboard's Time line: %q", want)
	}
	if wantFeature != "phase 14 has run 3d0h; it usually takes 7m–9m (2 runs); ~0s left by 2 past runs" {
		t.Fatalf("the dashboard's Time line of the feature: %q", wantFeature)
	}

	// Roots that do not hold the run: the folder holding it has the history.
	elsewhere := filepath.Join(cfgDir, "elsewhere.yaml")
	if err := os.WriteFile(elsewhere, []byte("roots: ["+t.TempDir()+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		conf := cfg
		if args[0] == "--config" {
			conf, args = args[1], args[2:]
		}
		cmd := exec.Command(bin, append([]string{"brief", "--config", conf}, args...)...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfgDir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("brief %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, args := range [][]string{{"brieftask-20261130"}, {live}, {"--config", elsewhere, live}} {
		arg := strings.Join(args, " ")
		if md := run(args...); !strings.Contains(md, "Time: "+want) {
			t.Errorf("brief %s: Markdown lacks %q:\n%s", arg, "Time: "+want, md)
		}
		var doc struct {
			Time string `json:"time"`
		}
		if out := run(append(args, "--json")...); json.Unmarshal([]byte(out), &doc) != nil || doc.Time != want {
			t.Errorf("brief --json %s: time %q, want %q\n%s", arg, doc.Time, want, out)
		}
	}
	if md := run("feat-live"); !strings.Contains(md, "Time: "+wantFeature) {
		t.Errorf("brief feat-live: Markdown lacks %q:\n%s", "Time: "+wantFeature, md)
	}
}

// judgeTimes judges runs as the dashboard does once it has read them all: a history learns every run, then
// each is judged by the clock at now with what all of them say.
func judgeTimes(runs []model.Run, now time.Time, rules model.LivenessRules) {
	h := model.NewHistory()
	for i := range runs {
		h.Observe(&runs[i])
	}
	for i := range runs {
		model.JudgeTime(&runs[i], now, rules, h)
		model.TimingAt(&runs[i], now)
	}
}
