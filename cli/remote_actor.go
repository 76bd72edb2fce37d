package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/remote"
	"runwatch/state/action"
	"runwatch/ui/app"
	"runwatch/ui/keys"
)

// fleetActor plans the dashboard's actions on local runs with the local actor, and on remote runs through
// the remote runwatch: its --dry-run is the preview, and applying runs the same command with --yes there.
type fleetActor struct {
	local app.Actor
	ssh   remote.SSH
	// env judges a local run's locks again when an action is planned (nil: they are taken as shown).
	env func() model.Env
	// roots are the remote roots the dashboard follows: install copies this runwatch to one of their hosts.
	roots []remote.Root
}

// NothingToUndo is the local actor's answer for a local run; a remote run's journal is on its host, where
// the plan asks it.
func (f fleetActor) NothingToUndo(run model.Run) string {
	if u, ok := f.local.(app.UndoKnower); ok && run.Remote == nil {
		return u.NothingToUndo(run)
	}
	return ""
}

func (f fleetActor) Plan(req app.ActionRequest) (app.Planned, error) {
	if req.Act == keys.ActInstall {
		for _, r := range f.roots {
			if r.Label() == req.Host {
				p, done, err := prepareInstall(f.ssh, r, defaultInstallDir)
				switch {
				case err != nil:
					return nil, fmt.Errorf("install refused: %w", err)
				case done != "":
					return nil, errors.New("install: " + strings.TrimSpace(done))
				}
				return p, nil
			}
		}
		return nil, fmt.Errorf("install: %s is not a host this dashboard follows", req.Host)
	}
	if req.Run.Remote == nil {
		if f.env != nil {
			req.Run = rejudgedElsewhere(req.Run, f.env())
		}
		return f.local.Plan(req)
	}
	root, _, err := remote.Parse(req.Run.Remote.Root)
	if err != nil {
		return nil, fmt.Errorf("%s refused: %w", req.Act, err)
	}
	if req.Verb == action.ActUnlock {
		for _, l := range req.Run.Locks {
			if l.JudgedOn != "" && l.Verdict == model.VerdictLive && (req.Word == "" || l.Path == req.Word) {
				return nil, fmt.Errorf("unlock refused: the lock %s is live (%s)", l.Path, strings.Join(l.Reasons, "; "))
			}
		}
		if req.Word == "" {
			// The host clears by itself only the locks it judges stale; one it calls unknown it clears only
			// when named. With none of the former, the one lock needing a word is the one meant.
			hostClears, named := false, []string(nil)
			for _, l := range req.Run.Locks {
				hostClears = hostClears || (l.Verdict == model.VerdictStale && l.JudgedOn == "")
				if needsWord(l) {
					named = append(named, l.Path)
				}
			}
			if !hostClears && len(named) == 1 {
				req.Word = named[0]
			}
		}
	}
	call, err := remoteActionArgs(req)
	if err != nil {
		return nil, fmt.Errorf("%s refused: %w", req.Act, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errb, code, err := f.ssh.Run(ctx, root, call.argv("--dry-run", "--json")...)
	if err != nil || code != 0 {
		return nil, fmt.Errorf("%s refused on %s: %s", req.Act, root.Label(), remoteFailure(root, code, out, errb, err))
	}
	shown, err := readRemotePlan(out)
	if err != nil {
		return nil, fmt.Errorf("%s refused on %s: %w", req.Act, root.Label(), err)
	}
	p := &remotePlan{ssh: f.ssh, root: root, call: call, summary: shown.Summary, preview: shown.Preview, question: shown.questionOn(root),
		expect: shown.expect()}
	if req.Verb == action.ActUnlock {
		// A lock on a host nobody here can judge still needs its holder typed, as it does locally; the
		// typed word then stands for --force on the remote command line. So does one judged stale here on a
		// third machine: the run's host still calls it unknown, and --force there rests on the person's word,
		// given with the verdict from here in view.
		for _, l := range req.Run.Locks {
			if needsWord(l) {
				if req.Word == "" || l.Path == req.Word {
					p.typed = lockWord(l)
					break
				}
			}
		}
	}
	return p, nil
}

// rejudgedElsewhere is run with each lock held on another machine judged again under env, asking that
// machine now: the verdict shown may be a liveness tick old, and no write may rest on an answer older than
// the plan.
func rejudgedElsewhere(run model.Run, env model.Env) model.Run {
	locks := append([]model.Lock(nil), run.Locks...)
	for i := range locks {
		if locks[i].Host != "" && env.Host != "" && !model.SameHost(locks[i].Host, env.Host) {
			model.JudgeLock(&locks[i], env)
		}
	}
	run.Locks = locks
	return run
}

// needsWord: the run's host will clear l only with --force, which stands for the holder typed here.
func needsWord(l model.Lock) bool {
	return l.Verdict == model.VerdictUnknown || (l.JudgedOn != "" && l.Verdict == model.VerdictStale)
}

func lockWord(l model.Lock) string {
	switch {
	case l.Host != "":
		return l.Host
	case l.Holder != "":
		return l.Holder
	}
	return "clear"
}

// remoteCall is a request for a remote runwatch: the run named by its path there, and the flags runwatch
// here passes on; its command line is the request's RemoteArgv.
type remoteCall struct {
	req   action.Request
	run   string
	flags []string
}

func (c remoteCall) argv(flags ...string) []string {
	return c.req.RemoteArgv(c.run, slices.Concat(c.flags, flags)...)
}

// name is the subcommand, for messages.
func (c remoteCall) name() string { return string(c.req.Verb) }

// remoteRunPath names run on its host for its runwatch there.
func remoteRunPath(run model.Run) string {
	if run.Kind == model.KindResumable && filepath.Base(run.StatePath) != "state.env" {
		return run.StatePath // several <name>.state.env runs can share one folder
	}
	return run.Dir
}

// remoteBriefFetcher asks a remote run's host for its brief (app.Options.RemoteBrief).
func remoteBriefFetcher(s remote.SSH) func(ctx context.Context, run model.Run) (string, error) {
	return func(ctx context.Context, run model.Run) (string, error) {
		if run.Remote == nil {
			return "", errors.New("not a remote run")
		}
		root, _, err := remote.Parse(run.Remote.Root)
		if err != nil {
			return "", err
		}
		return s.FetchBrief(ctx, root, remoteRunPath(run))
	}
}

// remoteActionArgs is the subcommand that does req on the run's host, with the run named by its path there.
func remoteActionArgs(req app.ActionRequest) (remoteCall, error) {
	if !req.Verb.Known() {
		return remoteCall{}, fmt.Errorf("%q cannot be done on a remote run", req.Act)
	}
	return remoteCall{req: req.Request, run: remoteRunPath(req.Run)}, nil
}

func remoteFailure(root remote.Root, code int, out, errb []byte, err error) string {
	if err != nil {
		return err.Error()
	}
	if code == 255 || code == 127 || remote.Predates(code, errb) {
		return remote.Explain(root, code, errb)
	}
	msg := strings.TrimSpace(string(errb))
	if msg == "" {
		msg = strings.TrimSpace(string(out))
	}
	// The remote runwatch says "runwatch step: refused: ..."; the dashboard says which action already.
	if _, after, ok := strings.Cut(msg, "refused: "); ok {
		msg = after
	}
	if code == exitUsage {
		// What runwatch here sends is well formed: a runwatch there that calls it a usage error is older
		// (it knows no --json or --expect, say).
		msg += "; its runwatch may be older than this one: upgrade it (" + remote.InstallHint(root) + ")"
	}
	return msg
}

type remotePlan struct {
	ssh              remote.SSH
	root             remote.Root
	call             remoteCall
	summary, preview string
	question         string
	typed            string
	// expect holds the host to the bytes the preview started from (--expect).
	expect []string
}

func (p *remotePlan) Summary() string           { return p.summary + " (on " + p.root.Label() + ")" }
func (p *remotePlan) Preview() string           { return p.preview }
func (p *remotePlan) Question() string          { return p.question }
func (p *remotePlan) TypedConfirmation() string { return p.typed }

func (p *remotePlan) Apply(typed string) (string, error) {
	if p.typed != "" && typed != p.typed {
		return "", fmt.Errorf("not confirmed: type %q exactly", p.typed)
	}
	host, _ := os.Hostname()
	flags := append([]string{"--yes", "--reason=from the runwatch dashboard on " + host}, p.expect...)
	if p.typed != "" {
		flags = append(flags, "--force")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errb, code, err := p.ssh.Run(ctx, p.root, p.call.argv(flags...)...)
	switch {
	case err != nil || code == 255 || code == 127:
		// ssh itself failed: whether the command ran there is unknown, and the person must be told so.
		return "", fmt.Errorf("%s: %s; whether it was applied is unknown: look at the run before trying again",
			p.call.name(), remoteFailure(p.root, code, out, errb, err))
	case code == exitAppliedUnaudit || code == exitAppliedOver:
		return "done on " + p.root.Label() + ", but: " + strings.TrimSpace(string(errb)), nil
	case code != 0:
		return "", errors.New(p.call.name() + " refused on " + p.root.Label() + ": " + remoteFailure(p.root, code, out, errb, nil))
	}
	return "done on " + p.root.Label() + ": " + p.summary, nil
}
