package model

import (
	"encoding/binary"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"unsafe"
)

// KVs is a state file's keys and their values in file order, packed: a watcher keeps those of every run it
// shows, ~40 a resumable run, and as a []KV each pair cost 32 bytes of headers beside its text (1.3 KB a run,
// 9% of the dashboard's heap at 10,000 runs; issue 35). Here the keys are one list shared by every file
// with the same keys in the same order (the writer's), and the values one string with where each ends:
// about 4 bytes a pair beside the values' text. Never changed once packed, so sharing the keys is safe: no
// method writes them, and List hands out a copy.
type KVs struct {
	keys   []string
	values string
	ends   []uint32 // ends[i] is where value i ends in values; nil for a nil list (JSON null)
}

// PackKVs packs list; a nil list stays nil.
func PackKVs(list []KV) KVs {
	if list == nil {
		return KVs{}
	}
	n := 0
	for _, kv := range list {
		n += len(kv.Value)
	}
	var b strings.Builder
	b.Grow(n)
	ends := make([]uint32, len(list))
	for i, kv := range list {
		b.WriteString(kv.Value)
		ends[i] = uint32(b.Len())
	}
	return KVs{keys: keyList(list), values: b.String(), ends: endList(ends)}
}

// Len is the number of pairs.
func (k KVs) Len() int { return len(k.ends) }

// At is pair i.
func (k KVs) At(i int) KV {
	start := uint32(0)
	if i > 0 {
		start = k.ends[i-1]
	}
	return KV{Key: k.keys[i], Value: k.values[start:k.ends[i]]}
}

// All yields the pairs in order.
func (k KVs) All() iter.Seq2[int, KV] {
	return func(yield func(int, KV) bool) {
		for i := range k.ends {
			if !yield(i, k.At(i)) {
				return
			}
		}
	}
}

// List is the pairs as a list of the caller's own (nil for a nil list).
func (k KVs) List() []KV {
	if k.ends == nil {
		return nil
	}
	out := make([]KV, len(k.ends))
	for i := range out {
		out[i] = k.At(i)
	}
	return out
}

// Value is key's value; a key written twice has its last value.
func (k KVs) Value(key string) (string, bool) {
	for i := len(k.ends) - 1; i >= 0; i-- {
		if k.keys[i] == key {
			return k.At(i).Value, true
		}
	}
	return "", false
}

// MarshalJSON writes the list as a []KV is written.
func (k KVs) MarshalJSON() ([]byte, error) { return json.Marshal(k.List()) }

// UnmarshalJSON reads what MarshalJSON writes.
func (k *KVs) UnmarshalJSON(b []byte) error {
	var list []KV
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*k = PackKVs(list)
	return nil
}

// maxKeyLists bounds the key lists kept to share: the writers' files have a few hundred shapes; past the
// bound a list is the file's own.
const maxKeyLists = 4096

var keyLists = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

// endLists are the ends of values shared by every file whose values have the same lengths in the same order:
// a writer's files differ mostly in text of the same length (times, ids, SHAs, 0s and 1s), so the runs of
// one task hold a few shapes (bench/idle's 8,334 state files, 9). Bounded as keyLists is; never written once
// packed, like the keys.
var endLists = struct {
	sync.Mutex
	m map[string][]uint32 // by the ends' bytes
}{m: map[string][]uint32{}}

// endList is ends, or an equal list another file's values already hold.
func endList(ends []uint32) []uint32 {
	if len(ends) == 0 {
		return ends
	}
	id := unsafe.String((*byte)(unsafe.Pointer(&ends[0])), 4*len(ends))
	endLists.Lock()
	defer endLists.Unlock()
	if shared, ok := endLists.m[id]; ok {
		return shared
	}
	if len(endLists.m) < maxKeyLists {
		endLists.m[strings.Clone(id)] = ends
	}
	return ends
}

// keyList is list's keys, shared with every list that has the same keys in the same order.
func keyList(list []KV) []string {
	n := 0
	for _, kv := range list {
		n += len(kv.Key) + binary.MaxVarintLen32
	}
	id := make([]byte, 0, n)
	for _, kv := range list {
		// Each key behind its length, so that no two lists spell the same id whatever their keys hold.
		id = binary.AppendUvarint(id, uint64(len(kv.Key)))
		id = append(id, kv.Key...)
	}
	keyLists.Lock()
	defer keyLists.Unlock()
	if keys, ok := keyLists.m[string(id)]; ok {
		return keys
	}
	keys := make([]string, len(list))
	for i, kv := range list {
		keys[i] = Intern(kv.Key)
	}
	if len(keyLists.m) < maxKeyLists {
		keyLists.m[string(id)] = keys
	}
	return keys
}
