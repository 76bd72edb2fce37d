package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"runwatch/model"
)

// Snapshot asks every host once for `runwatch status --json` of its roots, in parallel, and returns their
// runs (marked with their host) and each host's health. A host that cannot answer is in the health list
// as failed, with the reason; its runs are simply absent.
//
// With elsewhere, a lock a host could only call unknown because it names another machine that elsewhere
// reaches is judged on that machine (staleAfter as the command line's).
func Snapshot(ctx context.Context, s SSH, roots []Root, args []string, elsewhere *Elsewhere, staleAfter time.Duration) ([]model.Run, []model.HostHealth) {
	conns := group(roots)
	runs := make([][]model.Run, len(conns))
	hosts := make([]model.HostHealth, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], hosts[i] = snapshotOne(ctx, s, c, args, elsewhere, staleAfter)
		}()
	}
	wg.Wait()
	var all []model.Run
	for _, rs := range runs {
		all = append(all, rs...)
	}
	return all, hosts
}

func snapshotOne(ctx context.Context, s SSH, c connection, args []string, elsewhere *Elsewhere, staleAfter time.Duration) ([]model.Run, model.HostHealth) {
	h := model.HostHealth{Host: c.label, State: model.HostConnecting, Since: time.Now()}
	fail := func(msg string) ([]model.Run, model.HostHealth) {
		h.State, h.Error, h.Since = model.HostFailed, msg, time.Now()
		return nil, h
	}
	cmdArgs := append([]string{"status", "--json"}, args...)
	cmdArgs = append(cmdArgs, "--")
	cmdArgs = append(cmdArgs, c.paths...)
	out, stderr, code, err := s.Run(ctx, c.root, cmdArgs...)
	if err != nil {
		return fail(fmt.Sprintf("%s: %v", c.label, err))
	}
	// status exits 1 when some run has a stop condition; the document is whole then too.
	if code != 0 && code != 1 {
		return fail(Explain(c.root, code, stderr))
	}
	var doc model.Snapshot
	if err := json.Unmarshal(out, &doc); err != nil {
		return fail(fmt.Sprintf("%s: the remote runwatch's status is not JSON (%v)", c.label, err))
	}
	if msg, ok := protocolSkew(c.root, doc.Protocol); !ok {
		return fail(msg)
	}
	now := time.Now()
	for i := range doc.Runs {
		doc.Runs[i].Remote = &model.RemoteRef{Host: c.label, Root: rootFor(c, doc.Runs[i].Dir).String()}
		if elsewhere != nil && doc.Host != "" && namesAnother(doc.Runs[i], doc.Host) {
			model.JudgeLocksHeldElsewhere(&doc.Runs[i], model.Env{Now: now, Host: doc.Host, StaleAfter: staleAfter, Elsewhere: elsewhere})
		}
	}
	h.State, h.Since, h.LastSeen, h.Runs = model.HostLive, now, &now, len(doc.Runs)
	if code == 1 && len(stderr) > 0 {
		// A folder it could not read, for example: the runs are good, and the person should know.
		h.Error = Explain(c.root, code, stderr)
	}
	return doc.Runs, h
}
