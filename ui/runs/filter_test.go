// Tests of the filter's terms.

package runs

import (
	"testing"

	"runwatch/model"
)

// host:NAME finds a remote run by its host's name whether or not the destination names a user.
func TestHostFilterMatchesTheNameWithoutTheUser(t *testing.T) {
	run := func(host string) model.Run { return model.Run{ID: "r", Remote: &model.RemoteRef{Host: host}} }
	for host, want := range map[string]bool{"root@build1": true, "build1": true, "build1:2222": true, "pete@gpu2": false} {
		if got := matchesFilter(run(host), parseFilter("host:build1")); got != want {
			t.Errorf("host:build1 on %s: %v, want %v", host, got, want)
		}
	}
	if !matchesFilter(run("root@build1"), parseFilter("host:root@")) {
		t.Error("host:root@ does not find root@build1")
	}
}
