//go:build linux && !portable

package watch

// watchCostsDescriptors: inotify holds one descriptor for all its watches, so nothing is budgeted here.
// (fdcost_kqueue.go says why kqueue is budgeted; the build tag portable budgets on Linux too.)
const watchCostsDescriptors = false
