// Tests of the outputs: escapes, controls, bidi and zero-width marks never reach the terminal as they are.

package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestScreen(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "stage_start stage=S1", "stage_start stage=S1"},
		{"sgr colour", "\x1b[31mred\x1b[0m text", "red text"},
		{"cursor movement", "a\x1b[2J\x1b[Hb", "ab"},
		{"osc52 clipboard write BEL", "x\x1b]52;c;ZXZpbA==\x07y", "xy"},
		{"osc52 clipboard write ST", "x\x1b]52;c;ZXZpbA==\x1b\\y", "xy"},
		{"osc8 hyperlink keeps text", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"charset nF", "a\x1b(Bb", "ab"},
		{"two byte", "a\x1b7b\x1b8c", "abc"},
		{"lone esc at end", "abc\x1b", "abc"},
		{"esc esc", "a\x1b\x1b[1mb", "ab"},
		{"unterminated osc swallows rest", "a\x1b]0;title", "a"},
		{"bel", "ding\x07", "ding^G"},
		{"backspace", "abc\bd", "abc^Hd"},
		{"carriage return", "progress\rdone", "progress^Mdone"},
		{"del", "a\x7fb", "a^?b"},
		{"newline", "a\nb", "a^Jb"},
		// An 8-bit introducer is marked and what follows it kept: it never reaches the terminal (issue 36).
		{"c1 csi", "a\u009b31mb", "a<U+009B>31mb"},
		{"c1 osc", "a\u009d52;c;eA==\u009cb", "a<U+009D>52;c;eA==<U+009C>b"},
		{"c1 other", "a\u0085b", "a<U+0085>b"},
		{"bidi override", "abc\u202edef", "abc<U+202E>def"},
		{"zero width space", "ab\u200bc", "ab<U+200B>c"},
		{"word joiner", "a\u2060b", "a<U+2060>b"},
		{"bom", "\ufeffkey", "<U+FEFF>key"},
		{"mongolian vowel separator", "a\u180eb", "a<U+180E>b"},
		{"soft hyphen", "a\u00adb", "a<U+00AD>b"},
		{"invalid utf8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"tab at 0", "\tx", "        x"},
		{"tab after 3", "abc\tx", "abc     x"},
		{"tab after wide", "日本\tx", "日本    x"},
		{"unicode kept", "✓ done — naïve", "✓ done — naïve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Screen(c.in); got != c.want {
				t.Errorf("Screen(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestScreenLines(t *testing.T) {
	got := ScreenLines("one\r\ntwo\x1b[1m\n")
	want := []string{"one", "two", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
}

// FuzzScreen checks the one promise that matters: nothing that can act on a terminal survives.
func FuzzScreen(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]52;c;AA\x07", "\u009b1m", "a\tb", "\xff\xfe", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Screen(in)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", in, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || Hidden(r) {
				t.Fatalf("control %U survived in %q (from %q)", r, out, in)
			}
		}
	})
}

// Emoji sequences whose width terminals disagree on: after Screen, the width lipgloss measures (grapheme
// clusters) equals the per-rune wcwidth sum, and both equal what tmux 3.3a draws (measured with
// `tmux display -p '#{cursor_x}'` after printing each string), so pane borders stay in place.
func TestScreenEmojiWidthAgreesWithTerminal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		tmux int // cells tmux 3.3a advances for Screen(in)
	}{
		{"A\U0001F468\u200d\U0001F469\u200d\U0001F467", 7}, // family (ZWJ)
		{"A\u2764\uFE0F", 2},                               // heart + VS16
		{"A\U0001F44D\U0001F3FD", 3},                       // thumbs up + skin tone
		{"A\U0001F1EF\U0001F1F5", 3},                       // flag
		{"A\U0001F3F3\uFE0F\u200d\U0001F308", 4},           // rainbow flag
		{"A\U0001F469\u200d\U0001F4BB", 5},                 // technologist
		{"A\U0001F9D1\u200d\U0001F91D\u200d\U0001F9D1", 7}, // people holding hands
		{"A\u2764\uFE0F\u200d\U0001F525", 4},               // heart on fire
	} {
		got := Screen(tc.in)
		if w, wc := ansi.StringWidth(got), ansi.StringWidthWc(got); w != tc.tmux || wc != tc.tmux {
			t.Errorf("%q → %q: lipgloss width %d, wcwidth %d, tmux draws %d", tc.in, got, w, wc, tc.tmux)
		}
	}
}

// Classes holds a sample of every class of rune Hidden stands for, and of the sequences Screen and Plain
// remove whole; the cross-surface test in cli feeds the same samples through every output.
var classes = map[string]string{
	"C0 bell":              "\a",
	"C0 backspace":         "\b",
	"DEL":                  "\x7f",
	"C1 NEL":               "\u0085",
	"C1 CSI":               "\u009b31m",
	"CSI sequence":         "\x1b[2J",
	"OSC 52":               "\x1b]52;c;ZXZpbA==\a",
	"bidi override":        "\u202e",
	"bidi isolate":         "\u2066",
	"arabic letter mark":   "\u061c",
	"zero width space":     "\u200b",
	"word joiner":          "\u2060",
	"BOM":                  "\ufeff",
	"mongolian vowel sep.": "\u180e",
	"soft hyphen":          "\u00ad",
	"zero width joiner":    "\u200d",
	"invalid UTF-8":        "\xff",
}

func TestEveryClassIsNeutralisedByEveryOutput(t *testing.T) {
	for name, sample := range classes {
		in := "a" + sample + "b"
		for out, got := range map[string]string{
			"Screen": Screen(in), "Plain": Plain(in, 100), "JSON": string(JSON(marshal(t, in))),
		} {
			if !utf8.ValidString(got) {
				t.Errorf("%s of %s: invalid UTF-8 %q", out, name, got)
			}
			for _, r := range got {
				if Hidden(r) && !(out == "JSON" && r == '"') {
					t.Errorf("%s of %s left %U in %q", out, name, r, got)
				}
			}
			if !strings.HasPrefix(strings.Trim(got, `"`), "a") || !strings.HasSuffix(strings.Trim(got, `"`), "b") {
				t.Errorf("%s of %s lost the text around it: %q", out, name, got)
			}
		}
		var b strings.Builder
		for _, r := range strings.ToValidUTF8(in, "\uFFFD") {
			WriteEscaped(&b, r)
		}
		for _, r := range b.String() {
			if Hidden(r) {
				t.Errorf("WriteEscaped of %s left %U in %q", name, r, b.String())
			}
		}
	}
}

func marshal(t *testing.T, s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHiddenKeepsWhatPeopleWrite(t *testing.T) {
	for _, r := range "aZ09 ~é—✓日本\U0001F600" {
		if Hidden(r) {
			t.Errorf("Hidden(%U) = true: a character people write would be escaped", r)
		}
	}
}

func TestPlain(t *testing.T) {
	if got := Plain("  a\t\tb\r\n c  ", 100); got != "a b c" {
		t.Errorf("blanks: %q", got)
	}
	// Hidden runes are the marks Screen shows, not spaces (issue 36); blanks are one space.
	if got := Plain("x\x1b]52;c;AA\ay\u009b1mz\u200bw\u00a0\a", 100); got != "xy<U+009B>1mz<U+200B>w ^G" {
		t.Errorf("sequences and marks: %q", got)
	}
	if got := Plain(strings.Repeat("é", 1000), 300); len([]rune(got)) != 301 {
		t.Errorf("long text kept %d runes", len([]rune(got)))
	}
}

func TestJSONEscapesOnlyHidden(t *testing.T) {
	in := []byte("{\"t\":\"a\u200bb\u202ec\x7fd\u0085e — ✓\"}")
	want := `{"t":"a\u200bb\u202ec\u007fd\u0085e — ✓"}`
	if got := string(JSON(in)); got != want {
		t.Errorf("JSON(%q) = %s, want %s", in, got, want)
	}
}

// belowDEL checks eight bytes at a time; it must say what a byte-by-byte look says, wherever in a word the
// first byte at or above DEL falls, whatever is around it.
func TestBelowDELIsByteByByte(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for at := -1; at < n; at++ {
			for _, hi := range []byte{0x7e, 0x7f, 0x80, 0xc3, 0xfe, 0xff} {
				for _, fill := range []byte{0x00, 0x20, 0x7e} {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill
					}
					if at >= 0 {
						b[at] = hi
					}
					want := true
					for _, c := range b {
						want = want && c < 0x7f
					}
					if got := belowDEL(b); got != want {
						t.Fatalf("belowDEL(%x) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}
