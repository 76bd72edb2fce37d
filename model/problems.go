package model

// Problem codes. They are part of the JSON schema: add, never rename.
const (
	// Files that could not be read or understood.
	CodeStateMissing        = "state-file-missing"
	CodeStateUnreadable     = "state-file-unreadable"
	CodeStateUnparsable     = "state-file-unparsable"
	CodeStateTooLarge       = "state-file-too-large"
	CodeChecklistMissing    = "checklist-file-missing"
	CodeChecklistUnreadable = "checklist-file-unreadable"
	CodeChecklistUnparsable = "checklist-file-unparsable"
	CodeChecklistValue      = "checklist-value-invalid"
	CodeManifestMissing     = "manifest-missing"
	CodeManifestUnreadable  = "manifest-unreadable"
	CodeManifestUnparsable  = "manifest-unparsable"
	CodeManifestTooLarge    = "manifest-too-large"
	CodeManifestInvalid     = "manifest-invalid"
	// A manifest that parses but is cut short (jonggrang.TornReasons), read twice: the run is shown as read,
	// with this error, and no action plans from it.
	CodeManifestTorn   = "manifest-torn"
	CodeLockUnreadable = "lock-unreadable"
	CodeLogUnreadable  = "log-unreadable"
	CodeFileUnparsable = "file-unparsable"
	CodeUnknownStatus  = "unknown-status-value"
	// A resumable 0|1 flag (<STAGE>_DONE, finalization, push) holding another value; it counts as 0.
	CodeFlagValue = "flag-value-invalid"

	// Stop conditions (docs/FORMATS.md B.8) and convention rules.
	CodeStageDoneChecklistIncomplete = "stage-done-checklist-incomplete"
	CodeCurrentStageUnknown          = "current-stage-unknown"
	CodeArtifactMissing              = "artifact-missing"
	CodeNoStages                     = "no-stages"
	CodeLockLiveForeign              = "lock-held-live"
	// The stage order the files leave open where a write would depend on it (step), or anywhere (info).
	CodeStageOrderUnknown = "stage-order-unknown"
	// A stage marked done without artifacts/checkpoints/<stage>.done.json, for a writer that reopens it.
	CodeCheckpointMissing = "checkpoint-missing"

	// Warnings shown prominently, never stop conditions.
	CodeLockStale          = "lock-stale"
	CodeLockUnknown        = "lock-unknown"
	CodeFeedbackGate       = "feedback-gate-blocked"
	CodeFeedbackEscalation = "feedback-loop-escalation"
	CodeCompactionBlock    = "compaction-block"
	CodeCompactionMust     = "compaction-must"
	// Info: compaction-state.json older than the 5 minutes the gate trusts; shown, never blocking.
	CodeCompactionStale  = "compaction-state-stale"
	CodeAwaitingInput    = "awaiting-human-input"
	CodeGroupInterrupted = "orchestration-group-interrupted"
	CodeWorktreeStale    = "manifest-copy-stale"
	CodeArchived         = "run-archived"
)
