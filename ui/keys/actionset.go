// Sets of actions: what a pane says cannot apply where its cursor is.

package keys

func Set(actions ...string) map[string]bool {
	out := make(map[string]bool, len(actions))
	for _, a := range actions {
		out[a] = true
	}
	return out
}
