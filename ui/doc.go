// Package ui is the Bubble Tea dashboard. It takes all its data through messages (SnapshotMsg, BatchMsg), so
// it is built and tested against model values and fixtures without a watcher; package cli wires the
// watchers in (live.go).
//
// The dashboard is a root and five components, each in its own package below ui/, sharing four leaf
// packages. No component imports ui or another component (packages_test.go keeps it so): they share the
// App of ui/app and talk to the root through messages and the small interfaces of ui/app/component.go.
//
//	  cli ── Relay/RelayRemote: SnapshotMsg, BatchMsg, ErrorMsg, WatcherStoppedMsg ──┐  notify.Status
//	                                                                                  ▼
//	┌────────────────────────────── ui.Model (root) ───────────────────────────────────────┐
//	│ root.go    routes a key: top overlay → a pane reading text → root keys → focused pane │
//	│            keeps the overlay stack; turns PlanMsg/PagerMsg into overlays               │
//	│ layout.go  sizes the panes (single, stacked, wide); header.go, footer.go frame them    │
//	└──┬───────────────┬────────────────┬────────────────────┬────────────────┬────────────┘
//	   │ keys, Resort  │ keys, Selection │ keys, BatchMsg,    │ push/pop       │ push/pop
//	   │ Forget        │ Changed         │ LogOpenedMsg, …    │ keys           │ keys
//	   ▼               ▼                 ▼                    ▼                ▼
//	ui/runs         ui/detail        ui/timeline          ui/overlay        ui/pager
//	table, filter,  rows of the run, line-addressed log,  Confirm, Step-    brief, entry,
//	sort            time bars        find, search state,  Choice, Help      message
//	                                 entries
//	   │ sets App.Selected   │ Selection() → app.RequestAction → Actor ─┐
//	   │                     │                                          ▼
//	   │                     │            app.PlanMsg → root pushes overlay.Confirm (or StepChoice)
//	   │                     │            app.AppliedMsg, app.CopiedMsg → the footer's note
//	   │                     └──────────  app.PagerMsg (b brief, enter entry) → root pushes pager.New
//	   └──── every component reads ui/app.App (options, keymap, theme, runs, focus, clock) and changes only
//	         its own part of it
//
//	leaves, which any component may import and which import no component:
//	  ui/app    App, the messages, action requests and the Actor interface, Component/Overlay/Capturer,
//	            clock, clipboard, brief, remote logs
//	  ui/keys   the keymap, help lines, the attention key
//	  ui/theme  styles and the bordered Box
//	  ui/text   Sanitize (the one quoting helper before the terminal), width, cut, wrap, long styled lines
//
// To change how the timeline searches, work in ui/timeline (find.go, search.go); to add a column, in ui/runs
// (runstable.go); a new overlay is an app.Overlay in ui/overlay that the root pushes on a message. cli
// imports the leaves it needs (ui/app, ui/keys, ui/text) directly and takes New, NewActor and the relays from here.
package ui
