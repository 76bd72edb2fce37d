package cli

// Exit codes, the same for every command. The table below is what `runwatch help` and the README show, and
// a test runs each case, so a code added here must be documented and tested.
const (
	exitOK       = 0
	exitProblems = 1 // the command ran and found a problem: see exitCodes
	exitUsage    = 2
	// exitIncomplete is status's failure, apart from 1 (a run needs you) as git diff --exit-code keeps 1 for
	// "differs": a script can tell a normal day from a document that is missing runs.
	exitIncomplete = 6
)

type exitCode struct {
	code    int
	meaning string
}

var exitCodes = []exitCode{
	{exitOK, "success: printed, applied (or --dry-run previewed), or events --until reached"},
	{exitProblems, "the command ran but met a problem: status found a run that needs you (a stop condition); " +
		"an action was refused (gate not met, live lock, changed on disk, read-only); brief " +
		"found no such run, or RUN is ambiguous (events --run too); events could not start watching"},
	{exitUsage, "usage: an unknown command or flag, a bad flag value, a PATH or --root that does not exist, a " +
		"bad config file (a root of it that does not exist too: stderr names the file and line), notify " +
		"--no-notify, or no terminal for the dashboard"},
	{exitEventsTimeout, "events --timeout passed before --until was reached; goto found no pane of the run's agent " +
		"(stderr says why)"},
	{exitAppliedUnaudit, "an action was applied but not fully recorded: the audit line or the journal entry is " +
		"missing (stderr names which, and the action id)"},
	{exitAppliedOver, "an action was applied over a concurrent writer's change that could not be put back: " +
		"theirs is kept in the journal and 'runwatch undo' puts it back"},
	{exitIncomplete, "status could not give the whole picture: a folder it could not read, a host it could not " +
		"reach, or a document it could not finish writing (a full disk; brief's too); stderr says which. It wins over 1. " +
		"events and notify end so on a host never reached (one lost later is tried again)"},
	{exitNotAsShown, "an action was refused because a file it changes no longer holds the bytes its preview " +
		"started from (--expect, sent by the dashboard and by actions on ssh:// runs): nothing was written"},
	{exitEventsInterrupted, "events was interrupted while waiting for --until"},
}
