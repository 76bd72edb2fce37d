package resumable

import (
	"hash/maphash"
	"slices"
	"sync"

	"runwatch/model"
)

// sharedLists keeps one copy of each list of a kind that runs repeat: runs of one task at one point hold the
// same checklist items, flags and checklist gate, and a watcher keeps every run's (bench/idle's 10,000 runs hold 23
// different checklists; issue 35). A list handed to share is never written to again, by the reader or by
// anyone it hands the run to (watch.Update's rule), so runs may hold the same array.
type sharedLists[T comparable] struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64][]T // by the hash of the list; a list whose hash another holds stays its own
}

// maxSharedLists bounds each kind's table; past it a list is its own. Only the hash and the slice are held
// beside the arrays the runs hold anyway.
const maxSharedLists = 4096

func newSharedLists[T comparable]() *sharedLists[T] {
	return &sharedLists[T]{seed: maphash.MakeSeed(), m: map[uint64][]T{}}
}

// share returns a list equal to list that other runs may hold too; when none does yet, list itself, copied
// to its length if it has room to spare (which a watcher would copy away).
func (s *sharedLists[T]) share(list []T) []T {
	if len(list) == 0 {
		return list
	}
	if cap(list) > len(list) {
		list = append(make([]T, 0, len(list)), list...)
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, x := range list {
		maphash.WriteComparable(&h, x)
	}
	k := h.Sum64()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.m[k]; ok {
		if slices.Equal(old, list) {
			return old
		}
		return list
	}
	if len(s.m) < maxSharedLists {
		s.m[k] = list
	}
	return list
}

var (
	sharedChecklists = newSharedLists[model.ChecklistItem]()
	sharedFlags      = newSharedLists[model.Flag]()
	sharedGates      = newSharedLists[model.Gate]()
)
