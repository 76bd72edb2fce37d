package model

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestInternSharesOneCopy(t *testing.T) {
	t.Parallel()
	a, b := strings.Clone("design-verification"), strings.Clone("design-verification")
	first := Intern(a)
	runtime.GC() // a word interned stays so across collections
	if unsafe.StringData(first) != unsafe.StringData(Intern(b)) || Intern(a) != a || unsafe.StringData(first) == unsafe.StringData(a) {
		t.Error("the same text interned twice is two copies")
	}
	if Intern("") != "" {
		t.Error("the empty text is not itself")
	}
}
