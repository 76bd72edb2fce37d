package watch

import (
	"os"
	"syscall"
)

// On kqueue every watched folder costs a descriptor for itself and one for each entry in it (fsnotify
// watches the files to report writes, as inotify does), and a file created there later costs one more. The
// open-file limit bounds them all, and is shared with everything else runwatch opens: run files being
// read, logs being tailed, ssh sockets, the terminal. Go's runtime raises the soft limit to the hard one at
// start (capped at kern.maxfilesperproc on macOS, whose default soft limit is 256), and so leaves children
// their original limit; the watcher budgets half of what results and polls the folders that do not fit,
// saying so in the health line. Watches never fail silently on a spent limit.

// fdBudget counts the descriptors the watches hold.
type fdBudget struct {
	limit int // descriptors the watches may hold; 0: not budgeted (inotify)
	soft  int // RLIMIT_NOFILE's soft limit when watching began, for the health line
	used  int
	over  int // folders polled because they did not fit
	// held are the descriptors each folder's watch holds, kept here rather than in every dirNode: only
	// kqueue's watches hold any (issue 35).
	held map[*dirNode]int
}

// hold counts d more descriptors held by node's watch (d < 0: released); nothing when not budgeted.
func (b *fdBudget) hold(node *dirNode, d int) {
	if b.limit == 0 || d == 0 {
		return
	}
	b.held[node] += d
	b.used += d
}

// release forgets node's watch and the descriptors it held.
func (b *fdBudget) release(node *dirNode) {
	b.used -= b.held[node]
	delete(b.held, node)
}

// maxBudget caps the budget when the limit is unlimited or huge: more watches than this cost kernel memory
// for little gain over polling them.
const maxBudget = 1 << 20

// newFDBudget is the budget of a watcher whose watches cost descriptors when costs (watchCostsDescriptors,
// or a test's Options.costsDescriptors); else none.
func newFDBudget(costs bool) fdBudget {
	if !costs {
		return fdBudget{}
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fdBudget{limit: 128, soft: 256, held: map[*dirNode]int{}} // macOS's default soft limit, halved
	}
	soft := int(min(lim.Cur, maxBudget*2))
	return fdBudget{limit: soft / 2, soft: soft, held: map[*dirNode]int{}}
}

// budgeted is whether the watches' descriptors are counted (kqueue): EMFILE is then the open-file limit.
func (b fdBudget) budgeted() bool { return b.soft > 0 }

// cost is what watching dir would hold: the folder and each of its entries.
func (b *fdBudget) cost(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 1
	}
	return 1 + len(entries)
}
