package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runwatch/model"
	"runwatch/remote/sshtest"
	"runwatch/shellword"
	"runwatch/state/resumable/resumabletest"
)

// Issue 22.5: the run key joins host and path so no path a host sends makes it another host's key.
// "evil", watched at a folder where its runwatch forges a run whose state path is "0" + evil0's, must not
// overwrite evil0's run.
func TestAHostCannotOverwriteAnotherHostsRuns(t *testing.T) {
	root := t.TempDir()
	victim := resumabletest.MinimalRun(t, root, "irm-victim-20261201T080000Z")
	statePath := filepath.Join(victim, "state.env")
	forgedRoot := t.TempDir()
	wrap := fakeEvents(t, map[string]string{forgedRoot: fmt.Sprintf(`
  printf '%%s\n' '{"protocol":1,"type":"run-added","run":{"id":"forged","state_path":"0%s","dir":"0%s"}}'
  keepAlive`, statePath, victim)})
	fleet := sshtest.New(t, wrap, "evil", "evil0")
	s := SSH{Command: fleet.SSHCommand(), ControlDir: filepath.Join(fleet.Dir, "cm")}
	w := Watch(s, []Root{{Host: "evil", Path: forgedRoot}, {Host: "evil0", Path: root}}, Options{Backoff: 100 * time.Millisecond})
	defer w.Close()
	c := &collector{w: w, runs: map[string]model.Run{}, logs: map[string]int{}}
	c.until(t, "both hosts live with the forged run", func() bool {
		forged := false
		for _, r := range c.runs {
			forged = forged || r.ID == "forged"
		}
		return forged && c.host("evil").State == StateLive && c.host("evil0").State == StateLive
	})
	key := (&model.Run{StatePath: statePath, Remote: &model.RemoteRef{Host: "evil0"}}).Key()
	if r, ok := c.runs[key]; !ok || r.ID != "irm-victim-20261201T080000Z" || r.Remote.Host != "evil0" {
		t.Fatalf("evil0's run under %q: %+v (runs %v)", key, r, keys(c.runs))
	}
	if len(c.runs) != 2 {
		t.Fatalf("want evil's forged run and evil0's own, got %v", keys(c.runs))
	}
}

// fakeEvents is a folder for the remote PATH whose runwatch is the real one, except that `events` over one
// of the roots given runs that root's shell snippet instead (keepAlive then sends watch-health lines until
// nobody reads them).
func fakeEvents(t *testing.T, byRoot map[string]string) string {
	t.Helper()
	wrap := t.TempDir()
	var cases strings.Builder
	for root, snippet := range byRoot {
		fmt.Fprintf(&cases, "  %s)%s\n  exit 0;;\n", shellword.Quote(root), snippet)
	}
	script := fmt.Sprintf(`#!/bin/sh
keepAlive() { while printf '%%s\n' '{"protocol":1,"type":"watch-health","health":{}}'; do sleep 1; done; }
[ "$1" = %[3]s ] && eval "set -- $(%[2]s %[3]s --sh "$2")"
for a; do last=$a; done
if [ "$1" = events ]; then
  case "$last" in
%[1]s  esac
fi
exec %[2]s "$@"
`, cases.String(), shellword.Quote(filepath.Join(binDir, "runwatch")), ArgvCommand)
	if err := os.WriteFile(filepath.Join(wrap, "runwatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrap
}

// Issue 22.5: a host is the ssh destination it was reached as: root@alpha and alpha are two connections
// with two health entries (they may be two accounts with different runs), as are alpha and alpha:2222.
func TestHostIdentityIsTheDestination(t *testing.T) {
	var roots []Root
	for _, arg := range []string{"root@alpha:/a", "alpha:/b", "ssh://alpha:2222/c", "alpha:/d"} {
		r, _, err := Parse(arg)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, r)
	}
	conns := group(roots)
	var labels []string
	for _, c := range conns {
		labels = append(labels, c.label)
	}
	if fmt.Sprint(labels) != "[root@alpha alpha alpha:2222]" || len(conns[1].paths) != 2 {
		t.Fatalf("connections %v", labels)
	}
	for _, bad := range []string{"ssh://a%2Fb@alpha/x", "ssh://a%20b@alpha/x"} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("%q parsed: a slash or space in a label would make keys ambiguous", bad)
		}
	}
	if model.RemoteKey("evil", "0/x") == model.RemoteKey("evil0", "/x") {
		t.Fatal("two hosts' files share a key")
	}
}
