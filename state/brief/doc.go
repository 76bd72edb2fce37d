// Package brief builds resume briefs: what an interrupted run has done, where it restarts, what to retry,
// what is stale, and what must be resolved first, following each convention's own resume protocol
// (docs/FORMATS.md A.9, B.8, B.9).
//
// Use:
//
//	b := brief.Build(run, env)   // reads run.log artifact blocks and runs local git: call it in a tea.Cmd
//	text := b.Markdown()         // safe to print and to paste: run-file values are one-line and escaped
//	data, _ := json.Marshal(b)   // the same brief as data (schema field versions it)
//
// The resume command itself (template rendering and launching) is in package runwatch/state/launch.
package brief
