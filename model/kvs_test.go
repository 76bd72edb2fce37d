package model

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestKVsKeepThePairsInOrder(t *testing.T) {
	t.Parallel()
	list := []KV{{"RUN_ID", "r1"}, {"S1_DONE", "1"}, {"EMPTY", ""}, {"RUN_ID", "r2"}}
	k := PackKVs(list)
	if k.Len() != 4 || !reflect.DeepEqual(k.List(), list) {
		t.Fatalf("packed %v, want %v", k.List(), list)
	}
	if v, ok := k.Value("RUN_ID"); !ok || v != "r2" {
		t.Errorf("RUN_ID = %q, %v: the last one written wins", v, ok)
	}
	if _, ok := k.Value("MISSING"); ok {
		t.Error("a missing key was found")
	}
	for i, kv := range k.All() {
		if kv != list[i] {
			t.Errorf("pair %d = %v, want %v", i, kv, list[i])
		}
	}
	// JSON as a []KV: null for none, [] for an empty file.
	for _, l := range [][]KV{nil, {}, list} {
		want, _ := json.Marshal(l)
		got, err := json.Marshal(PackKVs(l))
		if err != nil || string(got) != string(want) {
			t.Errorf("JSON %s, %v; want %s", got, err, want)
		}
		var back KVs
		if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, PackKVs(l)) {
			t.Errorf("read back %v, %v; want %v", back.List(), err, l)
		}
	}
}

// Runs whose files have the same keys share one list of them, and nothing a caller is given can change it.
func TestKVsShareTheirKeysSafely(t *testing.T) {
	t.Parallel()
	a := PackKVs([]KV{{"KVS_TEST_A", "1"}, {"KVS_TEST_B", "2"}})
	b := PackKVs([]KV{{"KVS_TEST_A", "3"}, {"KVS_TEST_B", "4"}})
	if &a.keys[0] != &b.keys[0] {
		t.Error("two files with the same keys hold a list each")
	}
	l := a.List()
	l[0].Key = "CHANGED"
	if kv := b.At(0); kv.Key != "KVS_TEST_A" || kv.Value != "3" {
		t.Errorf("b's first pair is %v after a's list was changed", kv)
	}
	// Keys whose bytes run together differently are other lists.
	c := PackKVs([]KV{{"KVS_TEST_A\x00KVS_TEST_B", "5"}})
	d := PackKVs([]KV{{"KVS_TEST_A", "6"}, {"", "7"}, {"KVS_TEST_B", "8"}})
	if c.Len() != 1 || c.At(0).Key != "KVS_TEST_A\x00KVS_TEST_B" || d.Len() != 3 || d.At(2).Key != "KVS_TEST_B" {
		t.Errorf("lists mixed up: %v %v", c.List(), d.List())
	}
}

func TestPackStringsKeepsTheList(t *testing.T) {
	t.Parallel()
	list := []string{"checkpoints/M0.done.json", "", "m0/summary.json"}
	got := PackStrings(append(make([]string, 0, 8), list...))
	if !reflect.DeepEqual(got, list) || cap(got) != len(list) {
		t.Errorf("packed %q (cap %d), want %q at its length", got, cap(got), list)
	}
	if PackStrings(nil) != nil || PackStrings([]string{}) == nil {
		t.Error("a nil or empty list changed kind")
	}
}
