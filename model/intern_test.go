package model

import (
	"strings"
	"testing"
	"unsafe"
)

func TestInternSharesOneCopy(t *testing.T) {
	t.Parallel()
	a, b := strings.Clone("design-verification"), strings.Clone("design-verification")
	if unsafe.StringData(Intern(a)) != unsafe.StringData(Intern(b)) || Intern(a) != a {
		t.Error("the same text interned twice is two copies")
	}
	if Intern("") != "" {
		t.Error("the empty text is not itself")
	}
}
