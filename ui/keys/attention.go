// Binding lists: the attention key of a run and a footer list that names each key once.

package keys

import (
	"runwatch/model"

	"charm.land/bubbles/v2/key"
)

// AppendNew adds the bindings out does not list yet: the attention key is often one the pane lists anyway
// (b brief), and a footer saying it twice wastes the room it has.
func AppendNew(out []key.Binding, bs ...key.Binding) []key.Binding {
	for _, b := range bs {
		if !ContainsBinding(out, b) {
			out = append(out, b)
		}
	}
	return out
}

func ContainsBinding(bs []key.Binding, b key.Binding) bool {
	for _, x := range bs {
		if x.Help() == b.Help() {
			return true
		}
	}
	return false
}

// AttentionBinding is the key that settles an attention action, with the action's short word.
func AttentionBinding(k KeyMap, a model.Action) (key.Binding, bool) {
	act := attentionKeyAction(a)
	if act == "" {
		return key.Binding{}, false
	}
	return k.Bound(act)
}

// AgentBinding is the go-to-agent key when what settles the run is said to its agent (model.AgentSettles):
// the Needs-you line and the footer offer it beside the attention key.
func AgentBinding(k KeyMap, at model.Attention) (key.Binding, bool) {
	if !at.AgentSettles() {
		return key.Binding{}, false
	}
	return k.Bound(ActAgent)
}

// attentionKeyAction maps model.Judge's action to the dashboard's keymap action.
func attentionKeyAction(a model.Action) string {
	switch a {
	case model.ActionUnlock:
		return ActUnlock
	case model.ActionStep:
		return ActStep
	case model.ActionCheck:
		return ActTick
	case model.ActionRetry:
		return ActRetry
	case model.ActionResume:
		return ActLaunch
	case model.ActionBrief:
		return ActBrief
	case model.ActionInspect:
		return ActOpen
	}
	return ""
}
