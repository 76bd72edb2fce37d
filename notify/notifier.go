package notify

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"runwatch/model"
	"runwatch/watch"
)

// Switch is a channel setting: auto (on where it makes sense), on or off.
type Switch string

const (
	Auto Switch = "auto"
	On   Switch = "on"
	Off  Switch = "off"
)

// ParseSwitch checks a configured value; true/false and yes/no are accepted too.
func ParseSwitch(s string) (Switch, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return Auto, nil
	case "on", "true", "yes":
		return On, nil
	case "off", "false", "no":
		return Off, nil
	}
	return "", fmt.Errorf("%q: want auto, on or off", s)
}

// Settings are the user's choices (config `notify:` and flags).
type Settings struct {
	// Disabled turns every channel off; transitions are still found (for events).
	Disabled bool
	// Bell rings the terminal bell; auto means inside tmux, where it marks the window in the status bar.
	Bell Switch
	// Desktop sends a desktop notification by escape sequence; auto picks the protocol from the terminal.
	Desktop Protocol
	// TmuxMessage shows the notification with tmux display-message; auto means inside tmux.
	TmuxMessage Switch
	// Command is an argv template run per notification (see HookData); empty for none.
	Command        string
	CommandTimeout time.Duration
	// Completions also notifies when a run completes.
	Completions bool
	// Existing notifies for the runs that already need a person at start-up.
	Existing bool
}

// Options configure a Notifier.
type Options struct {
	Settings
	// Terminal receives the bell and escape sequences; nil means there is no terminal to write to, and those
	// channels are off.
	Terminal func(seq string)
	// Env is the environment runwatch runs in (nil: this process's); $TMUX and $TMUX_PANE say whether it
	// runs inside tmux.
	Env func(string) string
	// TmuxClient runs tmux commands; nil uses the tmux binary for $TMUX_PANE.
	TmuxClient *Tmux
	// Now is the clock (time.Now unless a test sets it).
	Now func() time.Time
	// OnNotify sees every notification delivered (the headless command prints it).
	OnNotify func(Notification)
	// OnStatus sees the status whenever it changes. It is called from the notifier's goroutine, never from
	// a caller of Apply or SetMuted, so it may block (the dashboard sends a message to its program).
	OnStatus func(Status)
	// Policy; zero values mean the defaults.
	Hold, Settle, Refill time.Duration
	Burst                int
}

// Status is what the footer shows about notifications.
type Status struct {
	// Channels that are on, in delivery order: "bell", "osc9"/"osc777"/"osc99", "tmux", "hook".
	Channels []string
	Muted    bool
	// Note is a one-time explanation (desktop notifications that tmux does not let through).
	Note string
	// Err is the last delivery failure (a hook that failed or timed out, a tmux call), with its time.
	Err   string
	ErrAt time.Time
	// Sent counts notifications delivered; Held counts those not delivered because of the mute.
	Sent, Held int
	Last       string
	LastAt     time.Time
}

// On reports whether any channel is on.
func (s Status) On() bool { return len(s.Channels) > 0 }

// Notifier finds transitions in the runs it is given and delivers notifications for them. Apply and
// SetMuted never block on delivery; Run does the delivering.
type Notifier struct {
	opts    Options
	tmux    Tmux
	inTmux  bool
	desktop Protocol
	bell    bool
	tmuxMsg bool
	hook    *Hook

	mu       sync.Mutex
	tracker  Tracker
	limiter  Limiter
	status   Status
	version  int // bumped on every status change, so Run publishes each one once
	noteDone bool
	seq      int
	wake     chan struct{}
	hooks    sync.WaitGroup
}

// New resolves the settings against the terminal (auto channels, the desktop protocol) and checks the hook
// template.
func New(opts Options) (*Notifier, error) {
	if opts.Env == nil {
		opts.Env = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	n := &Notifier{opts: opts, wake: make(chan struct{}, 1)}
	n.tracker = Tracker{Hold: opts.Hold, Completions: opts.Completions}
	n.limiter = Limiter{Settle: opts.Settle, Burst: opts.Burst, Refill: opts.Refill}
	n.inTmux = opts.Env("TMUX") != ""
	if opts.TmuxClient != nil {
		n.tmux = *opts.TmuxClient
	} else {
		n.tmux = Tmux{Pane: opts.Env("TMUX_PANE")}
	}
	if opts.Command != "" {
		if err := CheckHook(opts.Command); err != nil {
			return nil, err
		}
	}
	if opts.Disabled {
		return n, nil
	}
	term := opts.Terminal != nil
	n.bell = term && (opts.Bell == On || (opts.Bell == Auto || opts.Bell == "") && n.inTmux)
	n.tmuxMsg = n.inTmux && (opts.TmuxMessage == On || opts.TmuxMessage == Auto || opts.TmuxMessage == "")
	switch d := opts.Desktop; {
	case !term || d == ProtoOff:
	case d == ProtoAuto || d == "":
		id := Identity{Env: opts.Env}
		if n.inTmux {
			id.ClientTermName, id.ClientTermType = n.tmux.Client(context.Background())
		}
		n.desktop, _ = Detect(id)
	default:
		n.desktop = d
	}
	if n.desktop == ProtoOff {
		n.desktop = ""
	}
	if opts.Command != "" {
		n.hook = &Hook{Template: opts.Command, Timeout: opts.CommandTimeout}
	}
	if n.bell {
		n.status.Channels = append(n.status.Channels, "bell")
	}
	if n.desktop != "" {
		n.status.Channels = append(n.status.Channels, string(n.desktop))
	}
	if n.tmuxMsg {
		n.status.Channels = append(n.status.Channels, "tmux")
	}
	if n.hook != nil {
		n.status.Channels = append(n.status.Channels, "hook")
	}
	return n, nil
}

// Status is the current status.
func (n *Notifier) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.status
	s.Channels = append([]string(nil), s.Channels...)
	return s
}

// SetMuted mutes or unmutes delivery for the session. Transitions are still tracked while muted, so
// unmuting does not replay what happened meanwhile.
func (n *Notifier) SetMuted(m bool) {
	n.mu.Lock()
	n.status.Muted = m
	n.version++
	n.mu.Unlock()
	n.poke()
}

// Prime takes the runs found at start-up: with Existing, those that need a person are notified; else they
// are what "normal" is.
func (n *Notifier) Prime(runs []model.Run) {
	now := n.opts.Now()
	n.mu.Lock()
	if n.opts.Existing {
		var ts []Transition
		for _, r := range runs {
			if tr, ok := n.tracker.Observe(r, now); ok {
				ts = append(ts, tr)
			}
		}
		n.limiter.Add(ts, now)
	} else {
		n.tracker.Prime(runs, now)
	}
	n.mu.Unlock()
	n.poke()
}

// Apply takes one watcher batch. It returns at once; notifications go out from Run.
func (n *Notifier) Apply(u watch.Update) {
	now := n.opts.Now()
	n.mu.Lock()
	n.limiter.Add(n.tracker.Apply(u, now), now)
	n.mu.Unlock()
	n.poke()
}

func (n *Notifier) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Run delivers notifications as they fall due until ctx ends, then waits for running hooks.
func (n *Notifier) Run(ctx context.Context) {
	defer n.hooks.Wait()
	published := -1
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		published = n.publish(published)
		n.mu.Lock()
		due, ok := n.limiter.Due()
		n.mu.Unlock()
		wait := time.Hour
		if ok {
			wait = max(0, due.Sub(n.opts.Now()))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		case <-timer.C:
		}
		n.Flush(ctx)
	}
}

func (n *Notifier) publish(published int) int {
	n.mu.Lock()
	v := n.version
	n.mu.Unlock()
	if v != published && n.opts.OnStatus != nil {
		n.opts.OnStatus(n.Status())
	}
	return v
}

// Flush delivers what is due now. Run calls it; tests call it with an invented clock.
func (n *Notifier) Flush(ctx context.Context) {
	now := n.opts.Now()
	n.mu.Lock()
	due := n.limiter.Flush(now)
	muted := n.status.Muted
	if len(due) > 0 {
		if muted {
			n.status.Held += len(due)
		} else {
			n.status.Sent += len(due)
			n.status.Last, n.status.LastAt = due[len(due)-1].Line(), now
		}
		n.version++
	}
	n.mu.Unlock()
	if len(due) == 0 || muted {
		return
	}
	if n.bell {
		n.opts.Terminal("\a") // one bell for the lot: it marks the window, more would only be noise
	}
	for _, nt := range due {
		if n.opts.OnNotify != nil {
			n.opts.OnNotify(nt)
		}
		if n.desktop != "" {
			n.sendDesktop(ctx, nt)
		}
		if n.tmuxMsg {
			if err := n.tmux.Display(ctx, nt.Title()+": "+nt.Body()); err != nil {
				n.fail(err)
			}
		}
		if n.hook != nil {
			n.hooks.Add(1)
			go func(nt Notification) {
				defer n.hooks.Done()
				if err := n.hook.Run(ctx, nt); err != nil {
					n.fail(err)
				}
			}(nt)
		}
	}
}

// sendDesktop writes the desktop notification; inside tmux it goes through tmux's passthrough, which tmux
// drops unless allow-passthrough is on. That is checked at every notification, so turning it on works at
// once, and when it is off a note says how to turn it on, once.
func (n *Notifier) sendDesktop(ctx context.Context, nt Notification) {
	n.mu.Lock()
	n.seq++
	seq := desktopSequence(n.desktop, nt, n.seq)
	n.mu.Unlock()
	if !n.inTmux {
		n.opts.Terminal(seq)
		return
	}
	ok, err := n.tmux.Passthrough(ctx)
	if err != nil {
		n.fail(err)
		return
	}
	if !ok {
		n.mu.Lock()
		if !n.noteDone {
			n.noteDone = true
			n.status.Note = "desktop notifications (" + string(n.desktop) + ") need tmux passthrough: tmux set -g allow-passthrough on"
			n.version++
		}
		n.mu.Unlock()
		return
	}
	n.opts.Terminal(ansi.TmuxPassthrough(seq))
}

func (n *Notifier) fail(err error) {
	n.mu.Lock()
	n.status.Err, n.status.ErrAt = Plain(err.Error()), n.opts.Now()
	n.version++
	n.mu.Unlock()
	n.poke()
}
