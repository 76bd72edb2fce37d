package ui

import (
	"fmt"
	"sort"
	"strings"
)

// Action names are the keys of the config file's `keys:` map.
const (
	ActUp         = "up"
	ActDown       = "down"
	ActTop        = "top"
	ActBottom     = "bottom"
	ActPageUp     = "page_up"
	ActPageDown   = "page_down"
	ActNextPane   = "next_pane"
	ActPrevPane   = "prev_pane"
	ActOpen       = "open"
	ActBack       = "back"
	ActFilter     = "filter"
	ActNextMatch  = "next_match"
	ActPrevMatch  = "prev_match"
	ActNextError  = "next_error"
	ActPrevError  = "prev_error"
	ActFollow     = "follow"
	ActTimeFormat = "time_format"
	ActCopy       = "copy"
	ActHelp       = "help"
	ActQuit       = "quit"
	ActBrief      = "brief"

	ActUnlock = "unlock"
	ActStep   = "step"
	ActTick   = "tick"
	ActRetry  = "retry"
	ActPause  = "pause"
	ActUndo   = "undo"
	ActLaunch = "launch"
)

// Binding is one action with its keys. Help is generated from these, so what `?` shows is what works.
type Binding struct {
	Action   string
	Keys     []string
	Help     string
	Group    string
	Mutating bool
}

// KeyMap resolves key strings (tea.KeyPressMsg.String()) to actions.
type KeyMap struct {
	Bindings []Binding
	byKey    map[string]string
	ReadOnly bool
}

func defaultBindings() []Binding {
	return []Binding{
		{Action: ActUp, Keys: []string{"k", "up"}, Help: "move up", Group: "move"},
		{Action: ActDown, Keys: []string{"j", "down"}, Help: "move down", Group: "move"},
		{Action: ActTop, Keys: []string{"g", "home"}, Help: "go to top", Group: "move"},
		{Action: ActBottom, Keys: []string{"G", "end"}, Help: "go to bottom (timeline: follow)", Group: "move"},
		{Action: ActPageUp, Keys: []string{"ctrl+u", "pgup"}, Help: "half page up", Group: "move"},
		{Action: ActPageDown, Keys: []string{"ctrl+d", "pgdown"}, Help: "half page down", Group: "move"},
		{Action: ActNextPane, Keys: []string{"tab"}, Help: "next pane", Group: "move"},
		{Action: ActPrevPane, Keys: []string{"shift+tab"}, Help: "previous pane", Group: "move"},
		{Action: ActOpen, Keys: []string{"enter"}, Help: "open run / focus next pane", Group: "move"},
		{Action: ActBack, Keys: []string{"esc"}, Help: "back / clear filter", Group: "move"},
		{Action: ActFilter, Keys: []string{"/"}, Help: "filter runs / search timeline", Group: "find"},
		{Action: ActNextMatch, Keys: []string{"n"}, Help: "next match", Group: "find"},
		{Action: ActPrevMatch, Keys: []string{"N"}, Help: "previous match", Group: "find"},
		{Action: ActNextError, Keys: []string{"e"}, Help: "next error in timeline", Group: "find"},
		{Action: ActPrevError, Keys: []string{"E"}, Help: "previous error in timeline", Group: "find"},
		{Action: ActFollow, Keys: []string{"f"}, Help: "toggle follow mode", Group: "view"},
		{Action: ActTimeFormat, Keys: []string{"t"}, Help: "relative / absolute time", Group: "view"},
		{Action: ActCopy, Keys: []string{"y"}, Help: "copy focused item (OSC 52)", Group: "view"},
		{Action: ActBrief, Keys: []string{"b"}, Help: "resume brief of the run (y copies it)", Group: "view"},
		{Action: ActHelp, Keys: []string{"?"}, Help: "toggle help", Group: "view"},
		{Action: ActQuit, Keys: []string{"q", "ctrl+c"}, Help: "quit", Group: "view"},
		{Action: ActUnlock, Keys: []string{"U"}, Help: "clear stale lock(s)", Group: "change", Mutating: true},
		{Action: ActStep, Keys: []string{"S"}, Help: "step run forward", Group: "change", Mutating: true},
		{Action: ActTick, Keys: []string{"space"}, Help: "tick / untick checklist item", Group: "change", Mutating: true},
		{Action: ActRetry, Keys: []string{"R"}, Help: "retry failed phase", Group: "change", Mutating: true},
		{Action: ActPause, Keys: []string{"P"}, Help: "pause / resume run", Group: "change", Mutating: true},
		{Action: ActUndo, Keys: []string{"Z"}, Help: "undo last action", Group: "change", Mutating: true},
		{Action: ActLaunch, Keys: []string{"X"}, Help: "launch the resume command", Group: "change", Mutating: true},
	}
}

// NewKeyMap applies config overrides (action → keys) to the defaults. Unknown actions, a key bound to two
// actions, and ctrl chords on mutating actions are errors: a config mistake must not silently change what a
// key does. In read-only mode mutating actions are not bound at all, so no key can reach them.
func NewKeyMap(overrides map[string][]string, readOnly bool) (KeyMap, error) {
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
	for _, name := range names {
		i, ok := known[name]
		if !ok {
			errs = append(errs, fmt.Sprintf("unknown action %q", name))
			continue
		}
		keys := overrides[name]
		if len(keys) == 0 {
			errs = append(errs, fmt.Sprintf("action %q: no keys given", name))
			continue
		}
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				errs = append(errs, fmt.Sprintf("action %q: empty key", name))
			}
			if bs[i].Mutating && strings.Contains(k, "ctrl+") {
				errs = append(errs, fmt.Sprintf("action %q changes run state, so it may not use a ctrl chord (%q)", name, k))
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
				errs = append(errs, fmt.Sprintf("key %q is bound to both %q and %q", k, other, b.Action))
				continue
			}
			owner[k] = b.Action
		}
	}
	km := KeyMap{byKey: map[string]string{}, ReadOnly: readOnly}
	for _, b := range bs {
		if b.Mutating && readOnly {
			continue
		}
		for _, k := range b.Keys {
			km.byKey[k] = b.Action
		}
		km.Bindings = append(km.Bindings, b)
	}
	if len(errs) > 0 {
		return KeyMap{}, fmt.Errorf("keys: %s", strings.Join(errs, "; "))
	}
	return km, nil
}

// DefaultKeyMap is the keymap with no overrides.
func DefaultKeyMap(readOnly bool) KeyMap {
	km, err := NewKeyMap(nil, readOnly)
	if err != nil {
		panic(err) // the defaults are a constant; a conflict there is a programming error caught by tests
	}
	return km
}

// Action returns the action bound to key, or "".
func (k KeyMap) Action(key string) string { return k.byKey[key] }

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

// HelpLines renders the help screen from the bindings, grouped.
func (k KeyMap) HelpLines() []string {
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
				rows = append(rows, fmt.Sprintf("  %-*s  %s", width, strings.Join(b.Keys, "/"), b.Help))
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
	if k.ReadOnly {
		out = append(out, "", "Read-only: keys that change run state are disabled.")
	}
	return out
}

// MarkdownTable renders the keymap as a Markdown table (for the README).
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
