package model

import "slices"

// KeyIndex files string values under string keys where most keys hold one value: that value is kept alone,
// not as a list of one (a map slot of 32 bytes, not one of 40 and a list of 16 bytes). At 10,000 runs the
// watcher's folders, locks and plans and the history's tasks are mostly one run's each (issue 35). A key of
// several values has its list in more, and none in one.
type KeyIndex struct {
	one  map[string]string
	more map[string][]string
}

func NewKeyIndex() KeyIndex {
	return KeyIndex{one: map[string]string{}, more: map[string][]string{}}
}

// Add files v under key.
func (x KeyIndex) Add(key, v string) {
	if first, ok := x.one[key]; ok {
		delete(x.one, key)
		x.more[key] = []string{first, v}
	} else if list, ok := x.more[key]; ok {
		x.more[key] = append(list, v)
	} else {
		x.one[key] = v
	}
}

// Del takes v from under key. A list is made anew, never changed where it is: a caller may be ranging over
// what Of gave it.
func (x KeyIndex) Del(key, v string) {
	if first, ok := x.one[key]; ok {
		if first == v {
			delete(x.one, key)
		}
		return
	}
	list := x.more[key]
	if i := slices.Index(list, v); i >= 0 {
		list = append(list[:i:i], list[i+1:]...)
	}
	switch len(list) {
	case 0:
		delete(x.more, key)
	case 1:
		delete(x.more, key)
		x.one[key] = list[0]
	default:
		x.more[key] = list
	}
}

// Of is what is filed under key: one value alone (and no list), or several, or none.
func (x KeyIndex) Of(key string) (one string, several []string) {
	return x.one[key], x.more[key]
}

// Len is the number of keys with a value filed under them.
func (x KeyIndex) Len() int { return len(x.one) + len(x.more) }
