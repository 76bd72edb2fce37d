//go:build !linux || portable

package atomicfile

import "os"

// openBeneath has no kernel-side resolution to offer off Linux (or under the build tag portable): every name
// is opened by the component walk, O_NOFOLLOW at each step.
func (r *Root) openBeneath(string, string, int, uint32) (*os.File, bool, error) {
	return nil, false, nil
}
