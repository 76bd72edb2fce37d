package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"runwatch/config"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/termsafe"
)

// The action subcommands, one for each verb of state/action: the same requests and plans as the dashboard's
// keys.

// verbArgs is the usage of what v takes after RUN ("[LOCK]", "ITEM", "").
func verbArgs(v action.Verb) string {
	word, required := v.Word()
	if word == "" || required {
		return word
	}
	return "[" + word + "]"
}

func optArg(a []string) string {
	if len(a) > 0 {
		return a[0]
	}
	return ""
}

// Exit codes of the action subcommands beyond exitOK (applied, or previewed) and exitUsage: refused (nothing
// was changed); applied, but not fully recorded (the audit line or the journal entry is missing); applied over
// a concurrent writer's change (theirs is in the journal, undo puts it back).
const (
	exitRefused        = 1
	exitAppliedUnaudit = 4
	exitAppliedOver    = 5
	// exitNotAsShown: --expect named other bytes than the plan starts from now (a change since the preview).
	exitNotAsShown = 7
)

func init() {
	for _, v := range action.Verbs() {
		args := "RUN"
		if a := verbArgs(v); a != "" {
			args += " " + a
		}
		h := actionHelp[v]
		register(command{name: string(v), group: groupChange, summary: v.Summary(), args: args, about: h.about + actionAbout, examples: h.examples,
			completeArgs: []string{argRuns, argRunPart},
			define: func(fs *flagSet) runFunc {
				o := defineActionFlags(fs, v.TakesTo())
				return func(pos []string, stdout, stderr io.Writer) int {
					// Everything these commands print quotes run files (diffs, lock holders, refusals naming values).
					return runAction(v, o, pos, sanitizingWriter{stdout}, sanitizingWriter{stderr})
				}
			}})
	}
}

const actionAbout = "\n\nRUN is a run directory, a state file, or a unique prefix of a run id. The change is shown as a " +
	"diff first; on a terminal runwatch asks before applying it, elsewhere it needs --yes. Every applied change " +
	"is journaled, and 'runwatch undo RUN' restores it while nothing else has touched the file."

type actionFlags struct {
	set                                  *flagSet
	dryRun, yes, force, readOnly, asJSON *bool
	reason                               *string
	// expect is --expect, what the preview confirmed started from (file → digest): see expectWord.
	expect expectFlag
	// to is --to STAGE (step only): where a resumable run moves when its files leave the order open.
	to     *string
	common commonFlags
}

func defineActionFlags(fs *flagSet, to bool) *actionFlags {
	o := &actionFlags{set: fs}
	if to {
		o.to = fs.String("to", "", "the stage to move CURRENT_STAGE to, where the run's files do not say which comes next")
	}
	o.dryRun = fs.Bool("dry-run", false, "print the change that would be made and exit")
	o.yes = fs.Bool("yes", false, "do not ask for confirmation (an unknown lock still needs --force)")
	o.reason = fs.String("reason", "", "why, recorded in the audit line and the journal")
	o.force = fs.Bool("force", false, "clear an unknown lock without typing its holder; edit files owned by another user")
	o.readOnly = fs.Bool("read-only", false, "refuse every change")
	o.asJSON = fs.Bool("json", false, "with --dry-run: print the plan as JSON, with what it starts from for --expect")
	fs.Var(&o.expect, "expect", "apply only if the plan starts from the bytes a --dry-run --json showed (`F:SUM`: a file and its sha256, one per file)")
	o.common.register(fs)
	o.common.registerRunRoots(fs.FlagSet)
	return o
}

// expectFlag is --expect, given once for each file a preview starts from.
type expectFlag map[string]string

func (e *expectFlag) String() string { return "" }

func (e *expectFlag) Set(v string) error {
	file, digest, ok := strings.Cut(v, ":")
	if !ok || !isDigest(file) || (digest != action.Absent && !isDigest(digest)) {
		return fmt.Errorf("want F:SUM (a file and its sha256) as a --dry-run --json printed it, got %q", v)
	}
	if *e == nil {
		*e = expectFlag{}
	}
	(*e)[file] = digest
	return nil
}

func isDigest(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// expectWord is the --expect value for one file a plan starts from: what expectFlag reads back.
func expectWord(s action.Start) string { return "--expect=" + s.File + ":" + s.SHA256 }

// planJSON is what an action's --dry-run --json prints: what the dashboard, or runwatch on another machine,
// shows a person, and what the plan starts from, to hand back as --expect with the confirmation.
type planJSON struct {
	Action  string `json:"action"`
	Run     string `json:"run"`
	Summary string `json:"summary"`
	Preview string `json:"preview"`
	// Question is what a confirmation asks, what the plan writes ("Remove lock/active.lock and append to
	// run.log?"); a runwatch before it sends none.
	Question string `json:"question,omitempty"`
	// Confirm is the word a person must type to apply the plan (a lock whose liveness is unknown), if any.
	Confirm string         `json:"confirm,omitempty"`
	Starts  []action.Start `json:"starts"`
}

func runAction(v action.Verb, o *actionFlags, pos []string, stdout, stderr io.Writer) int {
	dryRun, yes, reason, force, readOnly, common, e := o.dryRun, o.yes, o.reason, o.force, o.readOnly, o.common, o.set.env
	name := string(v)
	if *o.asJSON && !*dryRun {
		return usageError(stderr, name, "--json goes with --dry-run: it prints the plan")
	}
	if len(pos) == 0 {
		return usageError(stderr, name, "RUN is missing: give a run directory or the start of a run id")
	}
	word, required := v.Word()
	if extra := len(pos) - 1; (required && extra < 1) || extra > 1 || (word == "" && extra > 0) {
		if word == "" {
			return usageError(stderr, name, "%s", oneRunOnly(pos))
		}
		return usageError(stderr, name, "expects RUN %s, got %q", verbArgs(v), pos)
	}
	req := action.Request{Verb: v, Word: optArg(pos[1:])}
	if o.to != nil {
		req.To = *o.to
	}
	cfg, err := common.resolve(config.Overrides{ReadOnly: *readOnly})
	if err != nil {
		return configError(stderr, name, err)
	}
	if root, isRemote, err := remote.Parse(pos[0]); err != nil {
		return usageError(stderr, name, "%v", err)
	} else if isRemote {
		return runRemoteAction(e, remoteCallOf(req, o, root), root, cfg, remoteActionFlags{dryRun: *dryRun, yes: *yes, asJSON: *o.asJSON}, stdout, stderr)
	}
	if code := checkRoots(e.getenv, name, cfg, stderr); code != exitOK {
		return code // RUN is looked for under them
	}
	loc, err := resolveRun(e.getenv, pos[0], cfg)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: %v\n", name, err)
		return exitRefused
	}
	env := reachingEnv(e.getenv, cfg)
	run := state.Load(loc, env)
	opts := action.Options{Env: env, Reason: *reason, Force: *force, ReadOnly: cfg.ReadOnly, Expect: o.expect, Seams: e.actionSeams,
		JournalPath: journalIn(e.getenv, "")}
	req.Run = run
	p, err := req.Plan(opts)
	var notShown *action.NotAsShownError
	switch {
	case errors.As(err, &notShown):
		fmt.Fprintf(stderr, "runwatch %s: refused: %v\n", name, err)
		return exitNotAsShown
	case err != nil:
		fmt.Fprintf(stderr, "runwatch %s: refused: %v\n", name, err)
		return exitRefused
	case *o.asJSON:
		defer p.Close()
		out := planJSON{Action: name, Run: run.ID, Summary: p.Summary, Preview: p.Preview(), Question: p.Question(), Starts: p.Starts()}
		if p.Confirm.Kind == action.ConfirmTyped {
			out.Confirm = p.Confirm.Word
		}
		if err := json.NewEncoder(terminalSafeJSONWriter{stdout}).Encode(out); err != nil {
			fmt.Fprintf(stderr, "runwatch %s: %v\n", name, err)
			return exitRefused
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "%s %s: %s\n", name, run.ID, p.Summary)
	io.WriteString(stdout, p.Preview())
	if *dryRun {
		fmt.Fprintln(stdout, "(dry run: nothing written)")
		return exitOK
	}
	typed, err := confirm(e, p, *yes, *force, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch %s: refused: %v\n", name, err)
		return exitRefused
	}
	err = action.Apply(p, action.ApplyOptions{Typed: typed})
	defer p.Close()
	for _, note := range p.Recovered {
		fmt.Fprintf(stderr, "runwatch %s: recovered: %s\n", name, note)
	}
	for _, note := range p.Raced {
		fmt.Fprintf(stderr, "runwatch %s: raced: %s\n", name, note)
	}
	var over *action.OverwroteError
	switch {
	case errors.As(err, &over):
		fmt.Fprintf(stdout, "applied: %s\n", p.Summary)
		fmt.Fprintf(stderr, "runwatch %s: warning: %v\n", name, err)
		return exitAppliedOver
	case action.Applied(err):
		fmt.Fprintf(stdout, "applied: %s\n", p.Summary)
		fmt.Fprintf(stderr, "runwatch %s: warning: %v\n", name, err)
		return exitAppliedUnaudit
	case err != nil:
		fmt.Fprintf(stderr, "runwatch %s: refused: %v\n", name, err)
		return exitRefused
	}
	fmt.Fprintf(stdout, "applied: %s\n", p.Summary)
	return exitOK
}

// confirm asks on a terminal, or takes --yes/--force; without a terminal and without them it refuses.
func confirm(e env, p *action.Plan, yes, force bool, stdout io.Writer) (typed string, err error) {
	if p.Confirm.Kind == action.ConfirmTyped {
		if force {
			return "", nil
		}
		if !e.stdinIsTerminal() {
			return "", fmt.Errorf("this lock's liveness is unknown: confirm on a terminal by typing %q, or pass --force", p.Confirm.Word)
		}
		fmt.Fprintf(stdout, "The lock's liveness cannot be checked from here. Type %q to clear it: ", p.Confirm.Word)
		answer, _ := bufio.NewReader(e.confirmations()).ReadString('\n')
		answer = strings.TrimSpace(answer)
		if answer != p.Confirm.Word {
			return "", fmt.Errorf("not confirmed (typed %q)", answer)
		}
		return answer, nil
	}
	if yes {
		return "", nil
	}
	if !e.stdinIsTerminal() {
		return "", errors.New("no terminal to confirm on; pass --yes to apply")
	}
	fmt.Fprint(stdout, termsafe.Screen(p.Question())+" [y/N] ")
	answer, _ := bufio.NewReader(e.confirmations()).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return "", nil
	}
	return "", errors.New("not confirmed")
}
