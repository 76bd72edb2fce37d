package cli

import "runwatch/state/action"

// actionHelp is what `runwatch VERB --help` says beyond the flags and the verb's summary (state/action).
var actionHelp = map[action.Verb]struct {
	about    string
	examples []example
}{
	action.ActUnlock: {
		about: "Without LOCK, clears every stale lock of the run, as the convention's own cleanup does. A stale lock " +
			"clears after y/N; a lock whose liveness is unknown only after you type its holder (or --force); a live " +
			"lock is never cleared. For a resumable run the lock's content is appended to run.log first.",
		examples: []example{
			{"see which locks would go, changing nothing", "runwatch unlock iso26262-mining --dry-run"},
			{"clear them without the question, saying why", "runwatch unlock iso26262-mining --yes --reason 'agent crashed'"},
		},
	},
	action.ActStep: {
		about: "A resumable run steps only when no live lock is held and every CB_<STAGE>_* item of the current " +
			"stage is ticked (the blockers are named otherwise), and the stage that comes next is known from the " +
			"run's files or the config's stage_order; where it is not, step refuses and --to STAGE names it " +
			"(never contradicting what the files say). A jonggrang run steps when it is paused or " +
			"awaiting input; it stays paused.",
		examples: []example{
			{"preview the change to state.env and the run.log line", "runwatch step sphinx --dry-run"},
			{"apply it from a script", "runwatch step sphinx --yes --reason 'reviewed by hand'"},
			{"name the next stage where the files do not", "runwatch step iso26262-mining --to finalize"},
		},
	},
	action.ActCheck: {
		about: "ITEM is the full key (CB_M2_NO_LEGACY_TOKENS) or the part after the stage (NO_LEGACY_TOKENS).",
		examples: []example{
			{"tick an item, asking first", "runwatch check sphinx CB_M2_NO_LEGACY_TOKENS"},
			{"tick it without asking", "runwatch check sphinx CB_M2_NO_LEGACY_TOKENS --yes"},
		},
	},
	action.ActUncheck: {
		about: "ITEM is the full key or the part after the stage. An item of a stage already marked done stays ticked.",
		examples: []example{
			{"untick an item, asking first", "runwatch uncheck sphinx CB_M2_NO_LEGACY_TOKENS"},
			{"preview it only", "runwatch uncheck sphinx CB_M2_NO_LEGACY_TOKENS --dry-run"},
		},
	},
	action.ActRetry: {
		about: "Without PHASE, the run's failed phase. The phase goes back to pending with its error cleared, " +
			"current_phase points at it, and the run is in_progress again.",
		examples: []example{
			{"retry the failed phase", "runwatch retry add-login-form"},
			{"retry phase 6.5, from a script", "runwatch retry add-login-form 6.5 --yes"},
		},
	},
	action.ActPause: {
		about: "Refused while a phase runs under a live agent or worker: the orchestrator would overwrite it.",
		examples: []example{
			{"pause a jonggrang run", "runwatch pause add-login-form"},
			{"from a script, with a reason for the journal", "runwatch pause add-login-form --yes --reason 'out of budget'"},
		},
	},
	action.ActResume: {
		about: "Sets the status only; to start the agent again, use the resume brief ('runwatch brief RUN').",
		examples: []example{
			{"mark a paused run running", "runwatch resume add-login-form"},
			{"preview it", "runwatch resume add-login-form --dry-run"},
		},
	},
	action.ActUndo: {
		about: "Restores only if the file still holds exactly what that action wrote; otherwise it refuses and " +
			"changes nothing.",
		examples: []example{
			{"see what would be restored", "runwatch undo sphinx --dry-run"},
			{"restore it", "runwatch undo sphinx --yes"},
		},
	},
}
