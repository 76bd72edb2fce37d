// Tests of Sanitize: escapes, controls and bidi marks never reach the terminal.

package text

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestSanitize(t *testing.T) {
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
		{"c1 csi", "a\u009b31mb", "ab"},
		{"c1 osc", "a\u009d52;c;eA==\u009cb", "ab"},
		{"c1 other", "a\u0085b", "a<U+0085>b"},
		{"bidi override", "abc\u202edef", "abc<U+202E>def"},
		{"invalid utf8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"tab at 0", "\tx", "        x"},
		{"tab after 3", "abc\tx", "abc     x"},
		{"tab after wide", "日本\tx", "日本    x"},
		{"unicode kept", "✓ done — naïve", "✓ done — naïve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sanitize(c.in); got != c.want {
				t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestSanitizeLines(t *testing.T) {
	got := SanitizeLines("one\r\ntwo\x1b[1m\n")
	want := []string{"one", "two", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
}

// FuzzSanitize checks the one promise that matters: nothing that can act on a terminal survives.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]52;c;AA\x07", "\u009b1m", "a\tb", "\xff\xfe", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Sanitize(in)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", in, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || IsBidiControl(r) {
				t.Fatalf("control %U survived in %q (from %q)", r, out, in)
			}
		}
	})
}

// Emoji sequences whose width terminals disagree on: after Sanitize, the width lipgloss measures (grapheme
// clusters) equals the per-rune wcwidth sum, and both equal what tmux 3.3a draws (measured with
// `tmux display -p '#{cursor_x}'` after printing each string), so pane borders stay in place.
func TestSanitizeEmojiWidthAgreesWithTerminal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		tmux int // cells tmux 3.3a advances for Sanitize(in)
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
		got := Sanitize(tc.in)
		if w, wc := ansi.StringWidth(got), ansi.StringWidthWc(got); w != tc.tmux || wc != tc.tmux {
			t.Errorf("%q → %q: lipgloss width %d, wcwidth %d, tmux draws %d", tc.in, got, w, wc, tc.tmux)
		}
	}
}
