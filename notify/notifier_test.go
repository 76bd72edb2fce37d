package notify

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"runwatch/model"
	"runwatch/watch"
)

// hostile is a run whose id and reason try to end the notification's sequence and start their own: an OSC
// 52 clipboard write, a BEL and ST terminator, an 8-bit OSC, a field separator and a tmux format that runs
// a shell command.
func hostile() model.Run {
	r := stalled("x\x1b]52;c;ZWNobyBwd25lZA==\x07;y\u009d0;t\u009c#(touch /tmp/pwned)", 1)
	r.Attention.Reason = "bad\x07\x1b\\\x1b[2J reason; with\nnewline \u202eevil"
	return r
}

// controls finds every byte or rune that could end or start a sequence.
var controls = regexp.MustCompile("[\x00-\x1f\x7f\u0080-\u009f\u00ad\u061c\u180e\u200b-\u200c\u200e-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")

func TestPlainLeavesNoControls(t *testing.T) {
	r := hostile()
	for _, s := range []string{Plain(r.ID), Plain(r.Attention.Reason), Plain(string([]byte{0xff, 0x1b, 0x9b, '1'}))} {
		if controls.MatchString(s) {
			t.Errorf("Plain left a control in %q", s)
		}
	}
	if got := Plain("  a\t\tb\r\n c  "); got != "a b c" {
		t.Errorf("blanks: %q", got)
	}
	if got := Plain(strings.Repeat("é", 1000)); len([]rune(got)) != maxPlain+1 {
		t.Errorf("long text kept %d runes", len([]rune(got)))
	}
}

func TestDesktopSequencesCannotBeInjected(t *testing.T) {
	n := Notification{Items: []Transition{{Kind: KindAttention, Run: hostile()}}}
	inner := func(seq, open, close string) string {
		t.Helper()
		if !strings.HasPrefix(seq, open) || !strings.HasSuffix(seq, close) {
			t.Fatalf("sequence %q is not %q...%q", seq, open, close)
		}
		body := strings.TrimSuffix(strings.TrimPrefix(seq, open), close)
		if controls.MatchString(body) {
			t.Errorf("control inside the sequence: %q", body)
		}
		return body
	}
	inner(desktopSequence(ProtoOSC9, n, 1), "\x1b]9;", "\x07")
	if fields := strings.Split(inner(desktopSequence(ProtoOSC777, n, 1), "\x1b]777;notify;", "\x07"), ";"); len(fields) != 2 {
		t.Errorf("OSC 777 has %d fields, want title and body: %q", len(fields), fields)
	}
	kitty := desktopSequence(ProtoOSC99, n, 7)
	parts := strings.Split(kitty, "\x1b\\")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("kitty: want two sequences, got %q", kitty)
	}
	for i, want := range []string{n.Title(), n.Body()} {
		meta, payload, _ := strings.Cut(strings.TrimPrefix(parts[i], "\x1b]99;"), ";")
		if !strings.Contains(meta, "i=runwatch7") || !strings.Contains(meta, "e=1") {
			t.Errorf("kitty metadata %q", meta)
		}
		got, err := base64.StdEncoding.DecodeString(payload)
		if err != nil || string(got) != want {
			t.Errorf("kitty payload %q decodes to %q (%v), want %q", payload, got, err, want)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		name string
		typ  string
		want Protocol
	}{
		{map[string]string{"KITTY_WINDOW_ID": "1", "TERM": "xterm-kitty"}, "", "", ProtoOSC99},
		{map[string]string{"TERM_PROGRAM": "iTerm.app"}, "", "", ProtoOSC9},
		{map[string]string{"TERM_PROGRAM": "WezTerm"}, "", "", ProtoOSC777},
		{map[string]string{"TERM": "xterm-ghostty"}, "", "", ProtoOSC777},
		{map[string]string{"TERM": "foot"}, "", "", ProtoOSC777},
		{map[string]string{"TERM_PROGRAM": "tmux", "TERM": "tmux-256color"}, "xterm-kitty", "", ProtoOSC99},
		{map[string]string{"TERM_PROGRAM": "tmux", "TERM": "tmux-256color"}, "xterm-256color", "iTerm2 3.5.0", ProtoOSC9},
		{map[string]string{"TERM": "xterm-256color", "VTE_VERSION": "7600"}, "", "", ProtoOSC777},
		{map[string]string{"TERM": "xterm-256color"}, "", "", ProtoOff},
		{map[string]string{"TERM_PROGRAM": "tmux", "TERM": "screen"}, "xterm-256color", "XTerm(379)", ProtoOff},
	} {
		got, why := Detect(Identity{Env: func(k string) string { return c.env[k] }, ClientTermName: c.name, ClientTermType: c.typ})
		if got != c.want || why == "" {
			t.Errorf("%v %q %q: %s (%s), want %s", c.env, c.name, c.typ, got, why, c.want)
		}
	}
}

// fakeTmux records the tmux commands and answers allow-passthrough as set.
type fakeTmux struct {
	mu          sync.Mutex
	passthrough string
	calls       [][]string
}

func (f *fakeTmux) client() *Tmux {
	return &Tmux{Pane: "%3", Run: func(_ context.Context, args ...string) (string, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, args)
		switch args[0] {
		case "show-options":
			return f.passthrough + "\n", nil
		case "display-message":
			if args[1] == "-p" {
				return "xterm-kitty\tkitty(0.35.0)\n", nil
			}
		}
		return "", nil
	}}
}

func (f *fakeTmux) displayed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c[0] == "display-message" && c[1] == "-d" {
			out = append(out, c[len(c)-1])
		}
	}
	return out
}

type rig struct {
	n    *Notifier
	now  time.Time
	tmux *fakeTmux
	mu   sync.Mutex
	out  strings.Builder
}

func (r *rig) written() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

func newRig(t *testing.T, s Settings, passthrough string) *rig {
	t.Helper()
	r := &rig{now: t0, tmux: &fakeTmux{passthrough: passthrough}}
	env := map[string]string{"TMUX": "/tmp/tmux-0/default,1,0", "TMUX_PANE": "%3", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}
	n, err := New(Options{Settings: s, Env: func(k string) string { return env[k] }, TmuxClient: r.tmux.client(),
		Now: func() time.Time { return r.now },
		Terminal: func(seq string) {
			r.mu.Lock()
			r.out.WriteString(seq)
			r.mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.n = n
	return r
}

// step moves the invented clock and delivers what is due, waiting for hooks to finish.
func (r *rig) step(d time.Duration) {
	r.now = r.now.Add(d)
	r.n.Flush(context.Background())
	r.n.hooks.Wait()
}

func TestNotifierInsideTmux(t *testing.T) {
	r := newRig(t, Settings{}, "on")
	if got := strings.Join(r.n.Status().Channels, " "); got != "bell osc99 tmux" {
		t.Fatalf("channels inside tmux by default: %q", got)
	}
	r.n.Prime([]model.Run{paused("a"), stalled("old", 100)})
	r.step(time.Hour)
	if r.written() != "" || r.n.Status().Sent != 0 {
		t.Fatalf("the start-up state was notified: %q", r.written())
	}
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{hostile()})})
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
	r.step(DefaultSettle - time.Millisecond)
	if r.written() != "" {
		t.Fatal("delivered before the settle time")
	}
	r.step(time.Millisecond)
	w := r.written()
	if strings.Count(w, "\a") != 1 || !strings.HasPrefix(w, "\a") {
		t.Errorf("want one bell first, got %q", w)
	}
	if strings.Count(w, "\x1bPtmux;") != 2 || strings.Count(w, "\x1b\x1b]99;") != 4 { // two notifications, title and body each
		t.Errorf("want the kitty sequences wrapped in tmux passthrough, got %q", w)
	}
	for _, dcs := range regexp.MustCompile(`\x1bPtmux;(.*?)\x1b\\`).FindAllStringSubmatch(strings.ReplaceAll(w, "\x1b\x1b", "\x1e"), -1) {
		if strings.ContainsAny(dcs[1], "\a\x1b") {
			t.Errorf("passthrough payload has an undoubled ESC or a BEL: %q", dcs[1])
		}
	}
	shown := r.tmux.displayed()
	if len(shown) != 2 || !strings.Contains(shown[1], "a needs you: lock held by dead pid 4242") {
		t.Errorf("display-message: %q", shown)
	}
	if strings.Contains(strings.ReplaceAll(shown[0], "##", ""), "#") || !strings.Contains(shown[0], "##(touch") || controls.MatchString(shown[0]) {
		t.Errorf("display-message of the hostile run is not inert: %q", shown[0])
	}
	if s := r.n.Status(); s.Sent != 2 || !strings.Contains(s.Last, "a needs you") {
		t.Errorf("status after delivery: %+v", s)
	}
}

func TestNotifierPassthroughOffNotesOnce(t *testing.T) {
	r := newRig(t, Settings{}, "off")
	r.n.Prime(nil)
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
	r.step(DefaultSettle)
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{failed("b")})})
	r.step(DefaultSettle)
	w := r.written()
	if strings.Contains(w, "\x1b") || strings.Count(w, "\a") != 2 {
		t.Errorf("with passthrough off want bells only, got %q", w)
	}
	if s := r.n.Status(); !strings.Contains(s.Note, "tmux set -g allow-passthrough on") || s.Err != "" {
		t.Errorf("status: %+v", s)
	}
}

func TestNotifierMute(t *testing.T) {
	r := newRig(t, Settings{Desktop: ProtoOff}, "on")
	r.n.Prime([]model.Run{paused("a")})
	r.n.SetMuted(true)
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
	r.step(DefaultSettle)
	if r.written() != "" || len(r.tmux.displayed()) != 0 {
		t.Fatalf("muted, yet %q was written", r.written())
	}
	if s := r.n.Status(); !s.Muted || s.Held != 1 || s.Sent != 0 {
		t.Errorf("status while muted: %+v", s)
	}
	r.n.SetMuted(false)
	r.step(time.Hour)
	if r.written() != "" {
		t.Error("unmuting replayed what was held")
	}
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{failed("a")})})
	r.step(DefaultSettle)
	if r.written() != "\a" {
		t.Errorf("after unmuting: %q", r.written())
	}
}

func TestNotifierOutsideTmuxWithoutTerminal(t *testing.T) {
	n, err := New(Options{Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if s := n.Status(); s.On() {
		t.Errorf("no terminal, no tmux, no hook: channels %v", s.Channels)
	}
	n2, _ := New(Options{Env: func(string) string { return "" }, Terminal: func(string) {},
		Settings: Settings{Bell: On, Desktop: ProtoOSC777}})
	if got := strings.Join(n2.Status().Channels, " "); got != "bell osc777" {
		t.Errorf("asked for bell and osc777 outside tmux: %q", got)
	}
}

func TestHookRunsOncePerNotificationWithItsArguments(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "argv")
	tmpl := `sh -c 'for a; do printf "%s|" "$a"; done >> "$0"; echo >> "$0"' ` + log + ` {{.Event}} {{.ID}} "{{.Code}}: {{.Reason}}"`
	r := newRig(t, Settings{Command: tmpl, Desktop: ProtoOff, TmuxMessage: Off, Bell: Off}, "on")
	if got := strings.Join(r.n.Status().Channels, " "); got != "hook" {
		t.Fatalf("channels: %q", got)
	}
	r.n.Prime([]model.Run{paused("a")})
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 2)})})
	r.step(DefaultSettle)
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{hostile()})})
	r.step(DefaultSettle)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "attention|a|stale-lock: lock held by dead pid 4242 (1s)|" {
		t.Fatalf("hook argv lines: %q", lines)
	}
	if controls.MatchString(lines[1]) || strings.Count(lines[1], "|") != 3 {
		t.Errorf("the hostile run's arguments: %q", lines[1])
	}
}

func TestHookFailuresReachTheStatus(t *testing.T) {
	for _, c := range []struct {
		tmpl    string
		timeout time.Duration
		want    string
	}{
		{`sh -c 'echo no display >&2; exit 3'`, 0, "notify.command sh: exit status 3: no display"},
		{`sleep 30`, 50 * time.Millisecond, "notify.command sleep: killed after 50ms"},
		{`/no/such/notifier {{.ID}}`, 0, "notify.command /no/such/notifier"},
	} {
		r := newRig(t, Settings{Command: c.tmpl, CommandTimeout: c.timeout, Desktop: ProtoOff, TmuxMessage: Off, Bell: Off}, "on")
		r.n.Prime(nil)
		r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
		r.step(DefaultSettle)
		if s := r.n.Status(); !strings.Contains(s.Err, c.want) || !s.ErrAt.Equal(r.now) {
			t.Errorf("%s: status error %q at %v, want %q", c.tmpl, s.Err, s.ErrAt, c.want)
		}
	}
	if _, err := New(Options{Settings: Settings{Command: `notify-send {{.NoSuchField}}`}}); err == nil ||
		!strings.Contains(err.Error(), "notify.command") {
		t.Errorf("a template with an unknown field: %v", err)
	}
	if _, err := New(Options{Settings: Settings{Command: `notify-send 'open`}}); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}

// Run delivers on its own timer: nothing before the settle ends, the bell when it does, and the status
// published with it. Run's waits are timers only, so the test runs in a bubble (testing/synctest) on its
// fake clock with the real settle, and says the instant rather than polling for it.
func TestRunPublishesStatusAndDeliversOnItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var out strings.Builder
		var sent []int
		n, err := New(Options{Env: func(string) string { return "" }, Settings: Settings{Bell: On},
			Terminal: func(s string) { mu.Lock(); out.WriteString(s); mu.Unlock() },
			OnStatus: func(s Status) { mu.Lock(); sent = append(sent, s.Sent); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		seen := func() (string, []int) { mu.Lock(); defer mu.Unlock(); return out.String(), append([]int(nil), sent...) }
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { n.Run(ctx); close(done) }()
		n.Prime([]model.Run{paused("a")})
		n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
		time.Sleep(DefaultSettle - time.Millisecond)
		synctest.Wait()
		if got, st := seen(); got != "" || len(st) == 0 || st[len(st)-1] != 0 {
			t.Fatalf("before the settle ended: terminal got %q, statuses %v", got, st)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got, st := seen(); got != "\a" || st[len(st)-1] != 1 {
			t.Errorf("when the settle ended: terminal got %q, statuses %v", got, st)
		}
		cancel()
		<-done
	})
}

func TestDisabledTurnsEveryChannelOffButStillChecksTheHook(t *testing.T) {
	r := newRig(t, Settings{Disabled: true, Bell: On, Desktop: ProtoOSC9, TmuxMessage: On, Command: "true {{.ID}}"}, "on")
	if s := r.n.Status(); s.On() {
		t.Fatalf("disabled, yet channels %v", s.Channels)
	}
	r.n.Prime(nil)
	r.n.Apply(watch.Update{Changed: model.RunPointers([]model.Run{stalled("a", 1)})})
	r.step(DefaultSettle)
	if r.written() != "" || len(r.tmux.displayed()) != 0 {
		t.Errorf("disabled notifier delivered: %q %q", r.written(), r.tmux.displayed())
	}
	if _, err := New(Options{Settings: Settings{Disabled: true, Command: "x {{.Nope}}"}}); err == nil {
		t.Error("a broken hook template passes when notifications are disabled; it would fail the day they are enabled")
	}
}
