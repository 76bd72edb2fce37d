package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const fdBudgetChildEnv = "RUNWATCH_FD_BUDGET_CHILD"

// The kqueue descriptor budget, tested on Linux through the same code: a child started the way macOS starts
// a program (soft open-file limit far below the hard one) watches more folders and files than half its limit
// holds. Go's runtime raises the soft limit to the hard one; the watcher budgets half of it, polls the rest,
// says so in the health line, and sees a change in every run, watched or polled.
func TestDescriptorBudgetPollsWhatDoesNotFit(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to lower the limit with")
	}
	base := t.TempDir()
	for i := range 20 {
		makeResumableRun(t, filepath.Join(base, "reports", fmt.Sprintf("r%02d-20260301T000000Z", i)), "S1")
	}
	cmd := exec.Command("bash", "-c", `ulimit -S -n 32 && ulimit -H -n 128 && exec "$0" -test.run='^TestDescriptorBudgetChild$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), fdBudgetChildEnv+"="+base)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestDescriptorBudgetChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestDescriptorBudgetChild(t *testing.T) {
	base := os.Getenv(fdBudgetChildEnv)
	if base == "" {
		t.Skip("helper process of TestDescriptorBudgetPollsWhatDoesNotFit")
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max != 128 || lim.Cur != 127 {
		t.Fatalf("limit %+v (%v): want the hard 128 and the soft raised to 127 by Go's runtime", lim, err)
	}
	// costsDescriptors: what kqueue builds have; inotify underneath keeps the test honest about changes.
	v := newView(t, Options{Paths: []string{base}, fallbackPoll: 20 * time.Millisecond, costsDescriptors: true})
	h := v.w.Health()
	if h.Mode != "mixed" || !strings.Contains(h.Err, " folders did not fit the 63 descriptors watching may hold (half the open-file limit, 127): polling them every 20ms") {
		t.Fatalf("health %+v: want a budget of 63 spent, the rest polled and said", h)
	}
	sps := make([]string, 0, 20)
	for i := range 20 {
		sps = append(sps, filepath.Join(base, "reports", fmt.Sprintf("r%02d-20260301T000000Z", i), "state.env"))
	}
	for _, sp := range sps {
		replaceAtomically(t, sp, resumableState(filepath.Dir(sp), "S2"))
	}
	v.until("every run at S2, watched or polled", func() bool {
		for _, sp := range sps {
			if r, _ := v.run(sp); r.CurrentStage != "S2" {
				return false
			}
		}
		return true
	})
	if err := v.w.Close(); err != nil {
		t.Fatal(err)
	}
	if b := v.w.tree.fds; b.limit != 63 || b.used > b.limit || b.used < b.limit-10 || b.over == 0 {
		t.Fatalf("budget %+v: want 63 nearly all held, never more, and folders over it", b)
	}
}
