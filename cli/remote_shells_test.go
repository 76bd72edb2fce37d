package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/remote/sshtest"
	"runwatch/state/action"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// fishHostile is a name that POSIX quoting ('\”) does not protect under fish, which reads \' inside single
// quotes as an escaped quote: quoted that way, it runs touch /tmp/PWN on a host whose login shell is fish.
const fishHostile = `x\';touch /tmp/PWN;\'`

// loginShells are the login shells a host may give the ssh session, by alias: each quotes differently.
func loginShells(t *testing.T) map[string]string {
	t.Helper()
	shells := map[string]string{}
	for alias, prog := range map[string]string{"sh": "dash", "bash": "bash", "zsh": "zsh", "fish": "fish", "tcsh": "tcsh"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", prog)
		}
		shells[alias] = p
	}
	return shells
}

// writeShellRun writes a small resumable run under root/name whose task name is marker, so the test sees
// which run a brief, a log tail or a stream read; no file in it names its folder.
func writeShellRun(t *testing.T, root, name, marker string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, body := range map[string]string{
		"state.env":           fmt.Sprintf("CURRENT_STAGE=\"S1\"\nS1_DONE=\"0\"\nS2_DONE=\"0\"\nTASK_NAME=\"%s\"\n", marker),
		"checklist.state.env": "CB_S1_A=\"1\"\nCB_S2_B=\"0\"\nCHECKLIST_SCHEMA_VERSION=\"1\"\n",
		"run.log":             "[2026-12-01T08:00:00Z] run_bootstrap marker=" + marker + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Issue 37.1: no word of ours is parsed by a host's login shell. On a real sshd whose login shell is dash,
// bash, zsh, fish and tcsh in turn, runs under every hostile name of issue 22 and the fish one, in a root
// whose own name is the fish one, are read through the log tail, the brief, an action (check, then
// uncheck) and the event stream: each reads exactly its run (a glob expanded would read the bait run
// h4-x1a), and nothing runs (no PWN file anywhere a touch would leave it).
func TestHostileNamesReachEveryLoginShellAsData(t *testing.T) {
	t.Parallel()
	shells := loginShells(t)
	var aliases []string
	for a := range shells {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	bin := buildRunwatch(t)
	fleet := sshtest.NewWith(t, filepath.Dir(bin), sshtest.Options{Shells: shells}, aliases...)

	names := append([]string{fishHostile, "b $(touch PWN1) `touch PWN2`; touch PWN3 'q\"*?[x]", "run-a$(touch pwned)",
		"x #{session_name} % ! ^ ~ {a,b} <in >out | & \\"}, hostileRunNames...)
	pwned := func() []string {
		var found []string
		for _, d := range append([]string{"/tmp", fleet.Dir}, func() []string {
			var homes []string
			for _, a := range aliases {
				homes = append(homes, fleet.Home(a))
			}
			return homes
		}()...) {
			for _, glob := range []string{"PWN*", "pwned"} {
				m, _ := filepath.Glob(filepath.Join(d, glob))
				found = append(found, m...)
			}
		}
		return found
	}
	if p := pwned(); len(p) > 0 {
		t.Fatalf("PWN files before the test (remove them): %v", p)
	}
	s := remote.SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	f := fleetActor{ssh: s}
	t.Run("shells", func(t *testing.T) {
		for _, alias := range aliases {
			// Each host its own runs, in a root whose own name is hostile too.
			root := filepath.Join(t.TempDir(), fishHostile)
			dirs := map[string]string{} // marker → folder
			for i, n := range append(names, "h4-x1a") {
				dirs[fmt.Sprintf("m%d", i)] = writeShellRun(t, root, n, fmt.Sprintf("m%d", i))
			}
			t.Run(alias, func(t *testing.T) {
				t.Parallel()
				hostileNamesThrough(t, fleet, s, f, alias, shells[alias], root, dirs)
			})
		}
	})
	if p := pwned(); len(p) > 0 {
		t.Errorf("a remote shell ran a command from a name: %v", p)
	}
}

// hostileNamesThrough reads each run in dirs (marker → folder) on alias through the log tail, the brief,
// an action (check CB_S2_B) and the stream.
func hostileNamesThrough(t *testing.T, fleet *sshtest.Fleet, s remote.SSH, f fleetActor, alias, shell, root string, dirs map[string]string) {
	{
		if got := fleet.On(alias, "echo $SHELL"); got != shell {
			t.Fatalf("%s: the login shell is %q, want %q", alias, got, shell)
		}
		// The glob bait, where the sessions start.
		if err := os.WriteFile(filepath.Join(fleet.Home(alias), "h4-x1a"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r := remote.Root{Host: alias, Path: root}
		// A master, as the dashboard's watcher keeps: the commands below go through its socket.
		master, err := s.MasterCmd(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		for marker, dir := range dirs {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			tail, err := s.FetchLogTail(ctx, r, filepath.Join(dir, "run.log"), 10)
			if err != nil || tail.Path != filepath.Join(dir, "run.log") || len(tail.Entries) == 0 || !strings.Contains(tail.Entries[0].Message, "marker="+marker) {
				t.Errorf("%s: the log tail of %q: %+v, %v", alias, dir, tail, err)
			}
			brief, err := s.FetchBrief(ctx, r, dir)
			cancel()
			if err != nil || !strings.Contains(brief, `“`+marker+`”`) {
				t.Errorf("%s: the brief of %q: %v\n%s", alias, dir, err, brief)
			}
			run := model.Run{Kind: model.KindResumable, ID: filepath.Base(dir), Dir: dir, StatePath: filepath.Join(dir, "state.env"),
				Remote: &model.RemoteRef{Host: alias, Root: r.String()}}
			p, err := f.Plan(app.ActionRequest{Act: keys.ActTick, Request: action.Request{Verb: action.ActCheck, Word: "CB_S2_B", Run: run}})
			if err != nil {
				t.Errorf("%s: planning a tick on %q: %v", alias, dir, err)
				continue
			}
			if _, err := p.Apply(p.TypedConfirmation()); err != nil {
				t.Errorf("%s: ticking on %q: %v", alias, dir, err)
			}
			want := `CB_S2_B="1"`
			if b, _ := os.ReadFile(filepath.Join(dir, "checklist.state.env")); !strings.Contains(string(b), want) {
				t.Errorf("%s: after the tick, %q holds\n%s\nwant %s", alias, dir, b, want)
			}
		}

		// The stream: the root's path goes as a word of `events`, and every run arrives from its own folder.
		w := remote.Watch(s, []remote.Root{r}, remote.Options{Backoff: 50 * time.Millisecond})
		seen := map[string]string{} // folder → task
		deadline := time.After(60 * time.Second)
		for len(seen) < len(dirs) {
			select {
			case u := <-w.Updates():
				for _, run := range u.Changed {
					seen[run.Dir] = run.Title
				}
			case <-deadline:
				t.Errorf("%s: the stream sent %d of %d runs: %v; hosts %+v", alias, len(seen), len(dirs), seen, w.Hosts())
				seen = nil
			}
			if seen == nil {
				break
			}
		}
		w.Close()
		if master != nil {
			_ = master.Process.Kill()
			_ = master.Wait()
		}
		for marker, dir := range dirs {
			if seen != nil && seen[dir] != marker {
				t.Errorf("%s: the stream's run in %q has task %q, want %q", alias, dir, seen[dir], marker)
			}
		}
	}
}

// Issue 37.1: a runwatch on a host from before ArgvCommand answers it as the unknown command it is to it
// (unknownCommand, unchanged since): every remote caller turns that into "upgrade the one on HOST".
func TestAnOlderRunwatchThereIsToldToUpgrade(t *testing.T) {
	t.Parallel()
	var errb strings.Builder
	code, handled := unknownCommand(remote.ArgvCommand, &errb)
	if !handled {
		t.Fatal("unknownCommand let the dashboard take it")
	}
	r := remote.Root{Host: "build1", Path: "/srv"}
	want := "build1: its runwatch is older than this one (it does not know __argv, which carries every command this one sends): upgrade the one on build1 (runwatch install build1)"
	if got := remote.Explain(r, code, []byte(errb.String())); got != want {
		t.Errorf("Explain: %q\nwant %q", got, want)
	}
	if got := remoteFailure(r, code, nil, []byte(errb.String()), nil); got != want {
		t.Errorf("an action's failure: %q", got)
	}
}
