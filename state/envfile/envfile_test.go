package envfile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"runwatch/model"
)

func TestParseSyntax(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []model.KV // effective entries
		bad  []int      // lines reported as ParseError
	}{
		{"written style", "A=\"1\"\nB=\"two words\"\n", kv("A", "1", "B", "two words"), nil},
		{"escaped backslash and quote", `P="C:\\dir \"x\""` + "\n", kv("P", `C:\dir "x"`), nil},
		{"unicode_escape sequences", `M="a\nb\tc\rd"`, kv("M", "a\nb\tc\rd"), nil},
		{"unknown escapes kept verbatim", `V="\$HOME \x41 \q"`, kv("V", `\$HOME \x41 \q`), nil},
		{"no dollar expansion", "HOME=/h\nX=\"$HOME/y\"\nY=$HOME\n", kv("HOME", "/h", "X", "$HOME/y", "Y", "$HOME"), nil},
		{"single quotes are literal", `S='a\\b "c" $d'`, kv("S", `a\\b "c" $d`), nil},
		{"unquoted trimmed", "U=   spaced value \t\n", kv("U", "spaced value"), nil},
		{"unquoted keeps trailing comment text", "U=abc # note\n", kv("U", "abc # note"), nil},
		{"comment after closing quote", "Q=\"abc\"  # note\nR='x' #n\n", kv("Q", "abc", "R", "x"), nil},
		{"export prefix", "export FOO=\"bar\"\nexport\tBAZ=1\n", kv("FOO", "bar", "BAZ", "1"), nil},
		{"key named export", "export=1\n", kv("export", "1"), nil},
		{"comments and blanks skipped", "# c\n\n   \n  # indented\nA=1\n", kv("A", "1"), nil},
		{"lines without = skipped", "just text\nA=1\nexport B\n", kv("A", "1"), nil},
		{"later duplicate wins", "A=1\nB=2\nA=3\n", kv("B", "2", "A", "3"), nil},
		{"split at first =", "A=b=c\n", kv("A", "b=c"), nil},
		{"blanks around key and =", "  A  =  \"x\"  \n", kv("A", "x"), nil},
		{"empty values", "A=\nB=\"\"\nC=''\n", kv("A", "", "B", "", "C", ""), nil},
		{"lower-case keys", "run_id=\"x\"\nMixed_Key=1\n", kv("run_id", "x", "Mixed_Key", "1"), nil},
		{"CRLF endings", "A=\"1\"\r\nB=2\r\n", kv("A", "1", "B", "2"), nil},
		{"lone CR ends a line", "A=1\rB=2\r", kv("A", "1", "B", "2"), nil},
		{"no final newline", "A=1\nB=\"2\"", kv("A", "1", "B", "2"), nil},
		{"BOM tolerated", "\xEF\xBB\xBFA=1\n", kv("A", "1"), nil},
		{"invalid UTF-8 kept", "A=\"\xff\xfe\"\n", kv("A", "\xff\xfe"), nil},
		{"unterminated double quote", "A=1\nB=\"unterminated\nC=3\n", kv("A", "1", "C", "3"), []int{2}},
		{"escaped closing quote is no close", `A="abc\"` + "\n", kv(), []int{1}},
		{"unterminated single quote", "A='x\nB=2\n", kv("B", "2"), []int{1}},
		{"NUL byte", "A=1\nB=x\x00y\nC=3\n", kv("A", "1", "C", "3"), []int{2}},
		{"text after closing quote", "A=\"x\"y\n", kv(), []int{1}},
		{"empty key", "=1\n  =2\n", kv(), []int{1, 2}},
		{"key with blanks", "A B=1\n", kv(), []int{1}},
		{"bad line does not hide later lines", "A=\"\nA=ok\n", kv("A", "ok"), []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.in))
			if got := f.Entries(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("entries = %q, want %q", got, tc.want)
			}
			var badLines []int
			for _, e := range f.Errors() {
				badLines = append(badLines, e.Line)
			}
			if !reflect.DeepEqual(badLines, tc.bad) {
				t.Errorf("bad lines = %v, want %v", badLines, tc.bad)
			}
			if (err != nil) != (len(tc.bad) > 0) {
				t.Errorf("err = %v", err)
			}
			var pe *ParseError
			if err != nil && (!errors.As(err, &pe) || pe.Line != tc.bad[0] || pe.Msg == "") {
				t.Errorf("err = %#v, want *ParseError for line %d", err, tc.bad[0])
			}
			if got := string(f.Bytes()); got != tc.in {
				t.Errorf("Bytes() = %q, want the input back", got)
			}
		})
	}
}

func kv(pairs ...string) []model.KV {
	out := []model.KV{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, model.KV{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func TestParseErrorMessages(t *testing.T) {
	cases := map[string]string{
		"A=\"x":    "line 1: unterminated double quote",
		"A='x":     "line 1: unterminated single quote",
		"\nA=\x00": "line 2: contains a NUL byte",
		"A=\"x\"y": "line 1: unexpected text after the closing double quote",
	}
	for in, want := range cases {
		if _, err := Parse([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) err = %v, want %q", in, err, want)
		}
	}
}

func TestGet(t *testing.T) {
	f, _ := Parse([]byte("A=1\nA=2\n"))
	if v, ok := f.Get("A"); !ok || v != "2" {
		t.Errorf("Get(A) = %q, %v", v, ok)
	}
	if _, ok := f.Get("a"); ok {
		t.Error("keys are case-sensitive; Get(a) found A")
	}
	if _, ok := f.Get("MISSING"); ok {
		t.Error("Get(MISSING) found something")
	}
}

func TestParseTooLarge(t *testing.T) {
	f, err := Parse(make([]byte, MaxSize+1))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if f == nil || len(f.Entries()) != 0 {
		t.Fatalf("File = %#v, want an empty File", f)
	}
}

func TestSetEditsInPlace(t *testing.T) {
	tests := []struct {
		name, in, key, value, want string
	}{
		{"double quoted", "A=\"0\"\nB=\"0\"\n", "A", "1", "A=\"1\"\nB=\"0\"\n"},
		{"escapes in double", "A=\"0\"\n", "A", `a\b"c`, "A=\"a\\\\b\\\"c\"\n"},
		{"bare stays bare", "# c\nS1_DONE=0 \t\n", "S1_DONE", "1", "# c\nS1_DONE=1 \t\n"},
		{"bare gains quotes for spaces", "A=0\n", "A", "two words", "A=\"two words\"\n"},
		{"bare gains quotes for empty-ish leading quote", "A=0\n", "A", `"x`, "A=\"\\\"x\"\n"},
		{"bare comment text is the value", "A=0 # note\n", "A", "1", "A=1\n"},
		{"single stays single", "A='0'\n", "A", "a b", "A='a b'\n"},
		{"single with quote becomes double", "A='0'\n", "A", "it's", "A=\"it's\"\n"},
		{"export kept", "export A=\"0\" # c\r\n", "A", "1", "export A=\"1\" # c\r\n"},
		{"CRLF kept", "A=\"0\"\r\nB=\"0\"\r\n", "B", "1", "A=\"0\"\r\nB=\"1\"\r\n"},
		{"last duplicate edited", "A=1\nA=2\n", "A", "3", "A=1\nA=3\n"},
		{"newline escaped", "A=\"0\"\n", "A", "x\ny\rz", "A=\"x\\ny\\rz\"\n"},
		{"newline in bare value quoted", "A=0\n", "A", "x\ny", "A=\"x\\ny\"\n"},
		{"BOM kept", "\xEF\xBB\xBFA=\"0\"\n", "A", "1", "\xEF\xBB\xBFA=\"1\"\n"},
		{"spaces around = kept", "A = \"0\"\n", "A", "1", "A = \"1\"\n"},
		{"new key sorted", "A=\"1\"\nC=\"3\"\n", "B", "2", "A=\"1\"\nB=\"2\"\nC=\"3\"\n"},
		{"new key first", "B=\"1\"\n", "A", "0", "A=\"0\"\nB=\"1\"\n"},
		{"new key last", "A=\"1\"\n", "Z", "9", "A=\"1\"\nZ=\"9\"\n"},
		{"new key after comment header", "# hdr\nB=1\n", "C", "x", "# hdr\nB=1\nC=\"x\"\n"},
		{"new key before trailing comment", "A=1\n# end\n", "B", "2", "A=1\nB=\"2\"\n# end\n"},
		{"new key in empty file", "", "A", "1", "A=\"1\"\n"},
		{"new key in comment-only file", "# only", "A", "1", "# only\nA=\"1\""},
		{"new key after last line without newline", "A=1", "B", "2", "A=1\nB=\"2\""},
		{"new key uses CRLF", "A=1\r\nC=3\r\n", "B", "2", "A=1\r\nB=\"2\"\r\nC=3\r\n"},
		{"new key escaped", "", "A", `q"\`, "A=\"q\\\"\\\\\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.TrySet(tc.key, tc.value); err != nil {
				t.Fatal(err)
			}
			if got := string(f.Bytes()); got != tc.want {
				t.Errorf("Bytes() =\n%q\nwant\n%q", got, tc.want)
			}
			if v, _ := f.Get(tc.key); v != tc.value {
				t.Errorf("Get after Set = %q, want %q", v, tc.value)
			}
			g, err := Parse(f.Bytes())
			if err != nil {
				t.Fatalf("edited file does not parse: %v", err)
			}
			if v, _ := g.Get(tc.key); v != tc.value {
				t.Errorf("re-parsed value = %q, want %q", v, tc.value)
			}
		})
	}
}

func TestSetKeepsOtherLinesByteForByte(t *testing.T) {
	in := "\xEF\xBB\xBF# header\r\nexport A='x' # keep\r\nB=\"1\"\nweird line\n\nC=\"\\\\\" \nD=\"bad\n"
	f, _ := Parse([]byte(in))
	f.Set("B", "2")
	want := strings.Replace(in, `B="1"`, `B="2"`, 1)
	if got := string(f.Bytes()); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestSetRefuses(t *testing.T) {
	f, _ := Parse([]byte("A=1\n"))
	for _, key := range []string{"", "A B", "A=B", "#A", "A\n", `A"`, "export A"} {
		if err := f.TrySet(key, "x"); err == nil {
			t.Errorf("TrySet(%q) accepted", key)
		}
	}
	if err := f.TrySet("A", "x\x00y"); err == nil {
		t.Error("TrySet accepted a NUL byte")
	}
	f.Set("A B", "x")
	if got := string(f.Bytes()); got != "A=1\n" {
		t.Errorf("refused Set changed the file: %q", got)
	}
}

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "state.env")
	if err := os.WriteFile(ok, []byte("A=\"1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(ok)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Get("A"); v != "1" {
		t.Errorf("A = %q", v)
	}

	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: err = %v", err)
	}
	var nr *NotRegularError
	if _, err := ReadFile(dir); !errors.As(err, &nr) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: err = %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(fifo); !errors.As(err, &nr) || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("fifo: err = %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: err = %v", err)
	}
	if _, err := ReadRegular(ok, 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit: err = %v", err)
	}
}

// The PROPOSAL templates are hand-written: unquoted values and comments. Editing one must change one line.
func TestTemplatesParseAndEditInPlace(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "opencode", "skills", "resumable-execution")
	data, err := os.ReadFile(filepath.Join(dir, "run-state.template.env"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries()) != 19 {
		t.Errorf("%d entries, want 19", len(f.Entries()))
	}
	if v, _ := f.Get("BASE_BRANCH"); v != "main" {
		t.Errorf("BASE_BRANCH = %q", v)
	}
	if v, ok := f.Get("RUN_ID"); !ok || v != "" {
		t.Errorf("RUN_ID = %q, %v", v, ok)
	}
	f.Set("S2_DONE", "1")
	f.Set("RUN_ID", "20260215T014733Z")
	want := strings.Replace(strings.Replace(string(data), "S2_DONE=0\n", "S2_DONE=1\n", 1), "RUN_ID=\n", "RUN_ID=20260215T014733Z\n", 1)
	if got := string(f.Bytes()); got != want {
		t.Errorf("edited template:\n%s\nwant\n%s", got, want)
	}

	data, err = os.ReadFile(filepath.Join(dir, "checklist-state.template.env"))
	if err != nil {
		t.Fatal(err)
	}
	f, err = Parse(data)
	if err != nil || len(f.Entries()) != 1 {
		t.Fatalf("checklist template: %v, %v", f.Entries(), err)
	}
	f.Set("CB_S1_VERIFY_GREEN", "0")
	if got := string(f.Bytes()); got != "CB_S1_VERIFY_GREEN=\"0\"\n"+string(data) {
		t.Errorf("checklist template after adding a key:\n%s", got)
	}
}

func TestComments(t *testing.T) {
	f, err := Parse([]byte("# checklist kept by hand\n\n# coverage for each required part,\n# in verify-summary.json\n" +
		"CB_VERIFY_COVERAGE_REPORT=\"0\" # see the plan, section 4\nCB_VERIFY_SCHEMA_VALID=0 # part of the value\n" +
		"CB_A='1'\n#\nCB_B=\"0\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Comments("CB_VERIFY_COVERAGE_REPORT")
	want := []Comment{{3, "coverage for each required part,"}, {4, "in verify-summary.json"}, {5, "see the plan, section 4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	for _, key := range []string{"CB_VERIFY_SCHEMA_VALID", "CB_A", "CB_B", "CB_NONE"} {
		if c := f.Comments(key); len(c) != 0 {
			t.Errorf("%s: %+v", key, c)
		}
	}
}
