package jsonindent

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppend: for every valid JSON document, compacted as json.Marshal leaves it, the indenter
// writes the same bytes as json.Indent.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[{}],"c":[1,2,{"d":null}]}`, `"x"`, `12.5e3`, `[true,false,null]`,
		`{"q":"a\"b\\c:{},[]","\u00e9":"\u2028 ,:"}`, `{"nested":[[[]],[[1]],{"x":{"y":{}}}]}`,
		`  { "spaced" : [ 1 , 2 ] }  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "    ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := Append([]byte("kept"), compact.Bytes(), "    ", "  "); !bytes.Equal(got, append([]byte("kept"), want.Bytes()...)) {
			t.Fatalf("%q:\ngot  %q\nwant %q", compact.Bytes(), got, want.Bytes())
		}
	})
}
