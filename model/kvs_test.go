package model

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
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

// TestPackKVsSharesTheEndsOfValuesOfEqualLengths: two files whose values differ but have the same lengths in
// the same order hold one list of where each value ends, and each reads its own values; other lengths
// hold their own.
func TestPackKVsSharesTheEndsOfValuesOfEqualLengths(t *testing.T) {
	a := PackKVs([]KV{{"RUN_ID", "20261108T205700Z"}, {"M0_DONE", "1"}, {"TASK_NAME", "ends-shared-a"}})
	b := PackKVs([]KV{{"RUN_ID", "20261109T010203Z"}, {"M0_DONE", "0"}, {"TASK_NAME", "ends-shared-b"}})
	c := PackKVs([]KV{{"RUN_ID", "20261109T010203Z"}, {"M0_DONE", "0"}, {"TASK_NAME", "ends-shared-longer"}})
	if unsafe.SliceData(a.ends) != unsafe.SliceData(b.ends) {
		t.Error("values of equal lengths hold ends of their own")
	}
	if unsafe.SliceData(a.ends) == unsafe.SliceData(c.ends) {
		t.Error("values of other lengths share ends")
	}
	for _, tc := range []struct {
		k    KVs
		want string
	}{{a, "ends-shared-a"}, {b, "ends-shared-b"}, {c, "ends-shared-longer"}} {
		if v, _ := tc.k.Value("TASK_NAME"); v != tc.want {
			t.Errorf("TASK_NAME = %q, want %q", v, tc.want)
		}
	}
	if v, _ := b.Value("M0_DONE"); v != "0" {
		t.Errorf("M0_DONE = %q", v)
	}
}
