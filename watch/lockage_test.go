package watch

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"runwatch/model"
)

// A lock's verdict that time alone changes reaches the runs with no file changing: a pid-less lock live by
// its age turns stale at stale-after, and one whose acquired_at lies ahead is judged by its age once that
// time has come (it was unknown, and an unknown verdict was never looked at again). The clock is synctest's,
// so the seconds pass at once; the watcher polls, as inotify's reads would keep the bubble's clock still.
func TestLockVerdictsTimeAloneChanges(t *testing.T) {
	for _, c := range []struct {
		name  string
		ahead time.Duration
		want  func(model.Lock) bool
	}{
		{"live by its age, then stale", 0, func(l model.Lock) bool {
			return l.Verdict == model.VerdictStale && strings.Contains(strings.Join(l.Reasons, "; "), "exceeds 2s")
		}},
		{"acquired_at ahead, then judged by its age", 1500 * time.Millisecond, func(l model.Lock) bool {
			return l.Verdict != model.VerdictUnknown
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				root := t.TempDir()
				dir := filepath.Join(root, ".jonggrang", ".output", "features", "f1")
				writeFile(t, filepath.Join(dir, "MANIFEST.yaml"), manifest("f1", 2))
				writeFile(t, filepath.Join(root, ".jonggrang", "locks", "lead.lock"), fmt.Sprintf(
					`{"agent_id": "lead", "files": ["a.go"], "acquired_at": %q}`+"\n",
					time.Now().Add(c.ahead).UTC().Format("2006-01-02T15:04:05.000Z")))
				sp := filepath.Join(dir, "MANIFEST.yaml")
				v := newView(t, Options{Paths: []string{root}, Poll: time.Second, reconcile: time.Hour, liveness: 50 * time.Millisecond, StaleAfter: 2 * time.Second})
				v.until("the lock read", func() bool { r, ok := v.run(sp); return ok && len(r.Locks) == 1 })
				if r, _ := v.run(sp); c.want(r.Locks[0]) {
					t.Fatalf("at start the lock is already %s: %v", r.Locks[0].Verdict, r.Locks[0].Reasons)
				}
				v.untilExplained("the lock judged again by the clock", func() bool {
					r, _ := v.run(sp)
					return len(r.Locks) == 1 && c.want(r.Locks[0])
				}, func() string { r, _ := v.run(sp); return fmt.Sprintf("%+v", r.Locks) })
			})
		})
	}
}

// A lock whose acquired_at lies an hour ahead changes its judgement when that hour comes, and only then: the
// liveness timer waits for it instead of judging the lock again every interval (a generated workspace dated
// ahead kept it judging 2,437 such locks every 2 s at 10,000 runs, issue 26). synctest's clock: the hundred
// intervals pass at once.
func TestLockAcquiredAheadIsJudgedWhenItComesNotEveryInterval(t *testing.T) {
	synctest.Test(t, testLockAcquiredAheadIsJudgedWhenItComes)
}

func testLockAcquiredAheadIsJudgedWhenItComes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".jonggrang", ".output", "features", "f1")
	writeFile(t, filepath.Join(dir, "MANIFEST.yaml"), manifest("f1", 2))
	writeFile(t, filepath.Join(root, ".jonggrang", "locks", "lead.lock"), fmt.Sprintf(
		`{"agent_id": "lead", "files": ["a.go"], "acquired_at": %q}`+"\n",
		time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")))
	passes := make(chan int, 1000)
	sp := filepath.Join(dir, "MANIFEST.yaml")
	v := newView(t, Options{Paths: []string{root}, Poll: time.Second, reconcile: time.Hour, liveness: time.Millisecond,
		livenessPass: func(judged int) { passes <- judged }})
	v.until("the lock read", func() bool { r, ok := v.run(sp); return ok && len(r.Locks) == 1 })
	if r, _ := v.run(sp); r.Locks[0].Verdict != model.VerdictUnknown {
		t.Fatalf("a lock acquired an hour ahead: %s %v", r.Locks[0].Verdict, r.Locks[0].Reasons)
	}
	<-passes                           // the first pass finds when the lock's time comes
	time.Sleep(100 * time.Millisecond) // a hundred liveness intervals
	synctest.Wait()                    // and every pass they made has been sent
	n, judged := 0, 0
	for more := true; more; {
		select {
		case j := <-passes:
			n++
			judged += j
		default:
			more = false
		}
	}
	if judged > 0 {
		t.Errorf("%d liveness passes in 100 intervals judged the lock %d times before its time came", n, judged)
	}
}
