//go:build !linux || portable

package watch

// watchCostsDescriptors: on kqueue (macOS, the BSDs) fsnotify holds a descriptor for every watched folder
// and for every file in it, so watches are budgeted (fdbudget.go). The build tag portable budgets on Linux
// too, where the accounting runs over inotify's watches and so is tested.
const watchCostsDescriptors = true
