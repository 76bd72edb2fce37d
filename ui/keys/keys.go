// Package keys is the dashboard's keymap: the actions, their default keys, config overrides and the help
// lines every hint and `?` are drawn from. It knows no component: each asks it which action a key is.
package keys

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"runwatch/state/action"
	"runwatch/suggest"
)

// Action names are the keys of the config file's `keys:` map.
const (
	ActUp          = "up"
	ActDown        = "down"
	ActTop         = "top"
	ActBottom      = "bottom"
	ActPageUp      = "page_up"
	ActPageDown    = "page_down"
	ActNextPane    = "next_pane"
	ActPrevPane    = "prev_pane"
	ActOpen        = "open"
	ActBack        = "back"
	ActFilter      = "filter"
	ActNextMatch   = "next_match"
	ActPrevMatch   = "prev_match"
	ActNextError   = "next_error"
	ActPrevError   = "prev_error"
	ActFollow      = "follow"
	ActTimeFormat  = "time_format"
	ActCopy        = "copy"
	ActHelp        = "help"
	ActQuit        = "quit"
	ActBrief       = "brief"
	ActSort        = "sort"
	ActHideDone    = "hide_done"
	ActMessage     = "message"
	ActMute        = "mute"
	ActSearchBack  = "search_backward"
	ActOnlyMatch   = "only_matches"
	ActWrap        = "wrap"
	ActScrollLeft  = "scroll_left"
	ActScrollRight = "scroll_right"
	ActLineStart   = "line_start"
	ActLineEnd     = "line_end"
	ActAgent       = "agent"

	// The keys that change a run name the verbs they do (Binding.Verbs): a key's config name is its verb's
	// where it does one, and a word of its own where it toggles between two.
	ActUnlock = string(action.ActUnlock)
	ActStep   = string(action.ActStep)
	ActTick   = "tick" // check or uncheck, whichever the item is not
	ActRetry  = string(action.ActRetry)
	ActPause  = string(action.ActPause) // pause, or resume a paused run
	ActUndo   = string(action.ActUndo)

	// Mutating keys that change no run file: they run a command or copy runwatch to a host.
	ActLaunch  = "launch"
	ActInstall = "install"
)

// Binding is one action with its keys. Help is generated from these, so what `?` shows is what works. Short
// is the word the footer uses beside the key ("tick", "step"); Help is the sentence `?` and docs/DASHBOARD.md use.
type Binding struct {
	Action   string
	Keys     []string
	Help     string
	Short    string
	Group    string
	Mutating bool
	// Verbs are the changes to a run the key asks for (state/action): one, or the two it toggles between.
	Verbs []action.Verb
}

// KeyMap resolves key presses to actions. Adding a feature's key is one line in defaultBindings: the config
// names it, `?`, the keys table of docs/DASHBOARD.md and the footer hints pick it up from there.
type KeyMap struct {
	Bindings []Binding
	byKey    map[string]string
	kb       map[string]key.Binding
	// refused holds the keys of mutating actions left out in read-only mode, so a press can be answered
	// with "read-only: …" instead of silence.
	refused  map[string]string
	ReadOnly bool
}

func defaultBindings() []Binding {
	return []Binding{
		{Action: ActUp, Keys: []string{"k", "up"}, Help: "move up", Short: "up", Group: "move"},
		{Action: ActDown, Keys: []string{"j", "down"}, Help: "move down", Short: "down", Group: "move"},
		{Action: ActTop, Keys: []string{"g", "home"}, Help: "go to top", Short: "top", Group: "move"},
		{Action: ActBottom, Keys: []string{"G", "end"}, Help: "go to bottom (timeline: follow)", Short: "bottom", Group: "move"},
		{Action: ActPageUp, Keys: []string{"ctrl+u", "pgup"}, Help: "half page up", Short: "page up", Group: "move"},
		{Action: ActPageDown, Keys: []string{"ctrl+d", "pgdown"}, Help: "half page down", Short: "page down", Group: "move"},
		{Action: ActNextPane, Keys: []string{"tab"}, Help: "next pane", Short: "pane", Group: "move"},
		{Action: ActPrevPane, Keys: []string{"shift+tab"}, Help: "previous pane", Short: "pane", Group: "move"},
		{Action: ActOpen, Keys: []string{"enter"}, Help: "open run / timeline: read the entry whole", Short: "open", Group: "move"},
		{Action: ActBack, Keys: []string{"esc"}, Help: "back / clear filter", Short: "back", Group: "move"},
		{Action: ActFilter, Keys: []string{"/"}, Help: "filter runs / search timeline", Short: "filter", Group: "find"},
		{Action: ActSearchBack, Keys: []string{"ctrl+r"}, Help: "search timeline backward (tab in the prompt: regex)", Short: "search back", Group: "find"},
		{Action: ActNextMatch, Keys: []string{"n"}, Help: "next match (wraps around)", Short: "next match", Group: "find"},
		{Action: ActPrevMatch, Keys: []string{"N"}, Help: "previous match (wraps around)", Short: "prev match", Group: "find"},
		{Action: ActOnlyMatch, Keys: []string{"&"}, Help: "timeline: highlight matches / show only matches", Short: "only matches", Group: "find"},
		{Action: ActNextError, Keys: []string{"e"}, Help: "next error in timeline (wraps around)", Short: "next error", Group: "find"},
		{Action: ActPrevError, Keys: []string{"E"}, Help: "previous error in timeline (wraps around)", Short: "prev error", Group: "find"},
		{Action: ActFollow, Keys: []string{"f"}, Help: "toggle follow mode", Short: "follow", Group: "view"},
		{Action: ActTimeFormat, Keys: []string{"t"}, Help: "relative / absolute time (with dates across days)", Short: "time", Group: "view"},
		{Action: ActCopy, Keys: []string{"y"}, Help: "copy focused item (OSC 52)", Short: "copy", Group: "view"},
		{Action: ActBrief, Keys: []string{"b"}, Help: "resume brief of the run (y copies it)", Short: "brief", Group: "view"},
		{Action: ActSort, Keys: []string{"s"}, Help: "sort runs: attention, name, last change", Short: "sort", Group: "view"},
		{Action: ActHideDone, Keys: []string{"."}, Help: "hide / show completed and archived runs", Short: "hide done", Group: "view"},
		{Action: ActMessage, Keys: []string{"i"}, Help: "read the last message in full", Short: "message", Group: "view"},
		{Action: ActAgent, Keys: []string{"a"}, Help: "go to the tmux pane where the run's agent runs", Short: "agent", Group: "view"},
		{Action: ActMute, Keys: []string{"m"}, Help: "mute / unmute notifications for this session", Short: "mute", Group: "view"},
		{Action: ActHelp, Keys: []string{"?"}, Help: "toggle help", Short: "help", Group: "view"},
		{Action: ActQuit, Keys: []string{"q", "ctrl+c"}, Help: "quit (q over help, a pager or a dialog closes it)", Short: "quit", Group: "view"},
		{Action: ActWrap, Keys: []string{"w"}, Help: "wrap long lines on / off", Short: "wrap", Group: "view"},
		{Action: ActScrollLeft, Keys: []string{"left", "h"}, Help: "scroll left (wrap off)", Short: "left", Group: "view"},
		{Action: ActScrollRight, Keys: []string{"right", "l"}, Help: "scroll right (wrap off)", Short: "right", Group: "view"},
		{Action: ActLineStart, Keys: []string{"0"}, Help: "scroll to the start of lines", Short: "line start", Group: "view"},
		{Action: ActLineEnd, Keys: []string{"$"}, Help: "scroll to the end of the longest line", Short: "line end", Group: "view"},
		{Action: ActUnlock, Keys: []string{"U"}, Help: "clear stale locks", Short: "clear lock", Group: "change", Mutating: true, Verbs: []action.Verb{action.ActUnlock}},
		{Action: ActStep, Keys: []string{"S"}, Help: "step run forward", Short: "step", Group: "change", Mutating: true, Verbs: []action.Verb{action.ActStep}},
		{Action: ActTick, Keys: []string{"space"}, Help: "tick / untick checklist item", Short: "tick", Group: "change", Mutating: true, Verbs: []action.Verb{action.ActCheck, action.ActUncheck}},
		{Action: ActRetry, Keys: []string{"R"}, Help: "retry failed phase", Short: "retry", Group: "change", Mutating: true, Verbs: []action.Verb{action.ActRetry}},
		{Action: ActPause, Keys: []string{"P"}, Help: "pause / resume run", Short: "pause/resume", Group: "change", Mutating: true, Verbs: []action.Verb{action.ActPause, action.ActResume}},
		{Action: ActUndo, Keys: []string{"Z"}, Help: "undo last action", Short: "undo", Group: "change", Mutating: true, Verbs: []action.Verb{action.ActUndo}},
		{Action: ActLaunch, Keys: []string{"X"}, Help: "launch the resume command", Short: "launch", Group: "change", Mutating: true},
		{Action: ActInstall, Keys: []string{"I"}, Help: "install runwatch on a host that lacks it (or has an older one)", Short: "install", Group: "change", Mutating: true},
	}
}

// NewKeyMap applies config overrides (action → keys) to the defaults. Unknown actions, a key bound to two
// actions, and ctrl chords or the confirmation dialog's keys on mutating actions are errors: a config
// mistake must not silently change what a key does. In read-only mode mutating actions are not bound at all,
// so no key can reach them.
func NewKeyMap(overrides map[string][]string, readOnly bool) (KeyMap, error) {
	return NewKeyMapAt(overrides, nil, readOnly)
}

// NewKeyMapAt is NewKeyMap with the config line of each action (config.KeyLines), which starts each error
// about that action.
func NewKeyMapAt(overrides map[string][]string, lines map[string]int, readOnly bool) (KeyMap, error) {
	bs := defaultBindings()
	known := map[string]int{}
	for i, b := range bs {
		known[b.Action] = i
	}
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []string
	at := func(action string) string {
		if lines[action] > 0 {
			return fmt.Sprintf("line %d: ", lines[action])
		}
		return ""
	}
	for _, name := range names {
		i, ok := known[name]
		if !ok {
			msg := fmt.Sprintf("unknown action %q", name)
			if near := suggest.Nearest(name, slices.Collect(maps.Keys(known))); len(near) > 0 {
				sort.Strings(near)
				msg += fmt.Sprintf(" (did you mean %q?)", strings.Join(near, `" or "`))
			}
			errs = append(errs, at(name)+msg)
			continue
		}
		keys := overrides[name]
		if len(keys) == 0 {
			errs = append(errs, at(name)+fmt.Sprintf("action %q: no keys given", name))
			continue
		}
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				errs = append(errs, at(name)+fmt.Sprintf("action %q: empty key", name))
			}
			if bs[i].Mutating && strings.Contains(k, "ctrl+") {
				errs = append(errs, at(name)+fmt.Sprintf("action %q changes run state, so it may not use a ctrl chord (%q)", name, k))
			}
			if bs[i].Mutating && slices.Contains(confirmKeys, k) {
				// pressing it twice would open the confirmation and answer it
				errs = append(errs, at(name)+fmt.Sprintf("action %q changes run state, so it may not use %q, a key the confirmation "+
					"dialog answers (%s)", name, k, strings.Join(confirmKeys, " ")))
			}
		}
		bs[i].Keys = append([]string(nil), keys...)
	}
	// Conflicts are checked over every binding, read-only or not, so a config that is wrong stays wrong
	// when someone later drops --read-only.
	owner := map[string]string{}
	for _, b := range bs {
		for _, k := range b.Keys {
			if other, dup := owner[k]; dup && other != b.Action {
				errs = append(errs, at(b.Action)+fmt.Sprintf("key %q is bound to both %q and %q", k, other, b.Action))
				continue
			}
			owner[k] = b.Action
		}
	}
	if len(errs) > 0 {
		return KeyMap{}, fmt.Errorf("keys: %s", strings.Join(errs, "; "))
	}
	return BuildKeyMap(bs, readOnly), nil
}

// BuildKeyMap indexes bindings, leaving out mutating ones in read-only mode so no key can reach them.
func BuildKeyMap(bs []Binding, readOnly bool) KeyMap {
	km := KeyMap{byKey: map[string]string{}, kb: map[string]key.Binding{}, refused: map[string]string{}, ReadOnly: readOnly}
	for _, b := range bs {
		if b.Mutating && readOnly {
			for _, k := range b.Keys {
				km.refused[k] = b.Action
			}
			continue
		}
		for _, k := range b.Keys {
			km.byKey[k] = b.Action
		}
		km.kb[b.Action] = key.NewBinding(key.WithKeys(b.Keys...), key.WithHelp(displayKey(b.Keys), b.Short))
		km.Bindings = append(km.Bindings, b)
	}
	return km
}

// displayKey is how a key reads in the footer: the first key, with "space" kept as a word.
func displayKey(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

// DefaultKeyMap is the keymap with no overrides.
func DefaultKeyMap(readOnly bool) KeyMap {
	km, err := NewKeyMap(nil, readOnly)
	if err != nil {
		panic(err) // the defaults are a constant; a conflict there is a programming error caught by tests
	}
	return km
}

// Action returns the action bound to key (tea.KeyPressMsg.String()), or "".
func (k KeyMap) Action(key string) string { return k.byKey[key] }

// Of returns the action a key press is bound to, or "".
func (k KeyMap) Of(msg tea.KeyPressMsg) string {
	for _, b := range k.Bindings {
		if key.Matches(msg, k.kb[b.Action]) {
			return b.Action
		}
	}
	return ""
}

// Refused returns the mutating action a key would run outside read-only mode, or "".
func (k KeyMap) Refused(msg tea.KeyPressMsg) string { return k.refused[msg.String()] }

// VerbsOf returns the verbs an action's key asks for (nil for a key that changes no run).
func VerbsOf(act string) []action.Verb {
	for _, b := range defaultBindings() {
		if b.Action == act {
			return b.Verbs
		}
	}
	return nil
}

// VerbActs are the actions whose keys change a run (they name verbs), in the keymap's order.
func VerbActs() []string {
	var out []string
	for _, b := range defaultBindings() {
		if len(b.Verbs) > 0 {
			out = append(out, b.Action)
		}
	}
	return out
}

// ActOf returns the action whose key asks for v ("tick" for uncheck), or "".
func ActOf(v action.Verb) string {
	for _, b := range defaultBindings() {
		if slices.Contains(b.Verbs, v) {
			return b.Action
		}
	}
	return ""
}

// HelpOf returns the help sentence of an action.
func (k KeyMap) HelpOf(action string) string {
	for _, b := range defaultBindings() {
		if b.Action == action {
			return b.Help
		}
	}
	return action
}

// Binding returns the bubbles binding of an action (disabled when the action is not bound, e.g. a mutating
// one in read-only mode, so help.Model leaves it out).
func (k KeyMap) Binding(action string) key.Binding {
	if b, ok := k.kb[action]; ok {
		return b
	}
	return key.NewBinding(key.WithDisabled())
}

// Bound is an action's binding and whether the action is bound at all.
func (k KeyMap) Bound(action string) (key.Binding, bool) {
	b, ok := k.kb[action]
	return b, ok
}

// IsZero says the keymap was never built (Options' zero value), so the defaults apply.
func (k KeyMap) IsZero() bool { return k.byKey == nil }

// BindingsOf returns the bubbles bindings of actions, skipping unbound ones.
func (k KeyMap) BindingsOf(actions ...string) []key.Binding {
	out := make([]key.Binding, 0, len(actions))
	for _, a := range actions {
		if b, ok := k.kb[a]; ok {
			out = append(out, b)
		}
	}
	return out
}

// Relabel is an action's binding with another description, for a pane where its key does something more
// particular than the keymap's wording ("/" searches the timeline).
func (k KeyMap) Relabel(action, desc string) []key.Binding {
	var out []key.Binding
	for _, b := range k.BindingsOf(action) {
		out = append(out, key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc)))
	}
	return out
}

// Without is bs less the bindings of the actions in no.
func (k KeyMap) Without(bs []key.Binding, no map[string]bool) []key.Binding {
	out := bs[:0:0]
	for _, b := range bs {
		skip := false
		for a := range no {
			if no[a] && k.kb[a].Help() == b.Help() {
				skip = true
			}
		}
		if !skip {
			out = append(out, b)
		}
	}
	return out
}

// KeysFor returns the display form of an action's keys, e.g. "j/down".
func (k KeyMap) KeysFor(action string) string {
	for _, b := range k.Bindings {
		if b.Action == action {
			return strings.Join(b.Keys, "/")
		}
	}
	return ""
}

// First returns the first key of an action, for short hints.
func (k KeyMap) First(action string) string {
	for _, b := range k.Bindings {
		if b.Action == action && len(b.Keys) > 0 {
			return b.Keys[0]
		}
	}
	return ""
}

// notHereMark follows, in the help overlay, a key that cannot apply to the item focused when it opened:
// help still lists every key, and a word (not only a colour) says which do not work here.
const NotHereMark = "(not here)"

// HelpLines renders the help screen from the bindings, grouped; the actions in notHere (the focused
// component's, see notHere on the panes) are marked as not applying to the focused item.
func (k KeyMap) HelpLines(notHere map[string]bool) []string {
	groups := []struct{ id, title string }{
		{"move", "Move"}, {"find", "Find"}, {"view", "View"}, {"change", "Change run state (asks first)"},
	}
	width := 0
	for _, b := range k.Bindings {
		width = max(width, len(strings.Join(b.Keys, "/")))
	}
	var out []string
	for _, g := range groups {
		var rows []string
		for _, b := range k.Bindings {
			if b.Group == g.id {
				row := fmt.Sprintf("  %-*s  %s", width, strings.Join(b.Keys, "/"), b.Help)
				if notHere[b.Action] {
					row += "  " + NotHereMark
				}
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, g.title)
		out = append(out, rows...)
	}
	for _, b := range k.Bindings {
		if notHere[b.Action] {
			out = append(out, "", NotHereMark+": the key does not apply, when help opened, to what it acts on (the change keys: the Detail's selection).")
			break
		}
	}
	if k.ReadOnly {
		out = append(out, "", "Read-only: keys that change run state are disabled.")
	}
	return out
}

// MarkdownTable renders the keymap as a Markdown table (for docs/DASHBOARD.md).
func (k KeyMap) MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| Keys | Action | Config name |\n|---|---|---|\n")
	for _, bd := range k.Bindings {
		keys := make([]string, len(bd.Keys))
		for i, key := range bd.Keys {
			keys[i] = "`" + key + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` |\n", strings.Join(keys, " "), bd.Help, bd.Action)
	}
	return b.String()
}

// confirmKeys are the keys the dialog answers itself (Update): apply, cancel, scroll. NewKeyMap refuses them
// for a mutating action, whose key pressed twice would otherwise open the dialog and confirm it.
var confirmKeys = []string{"y", "Y", "n", "N", "q", "enter", "esc", "ctrl+c", "j", "k", "up", "down", "pgup", "pgdown"}
