package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"runwatch/config"
	"runwatch/fleet"
	"runwatch/model"
	"runwatch/notify"
	"runwatch/termsafe"
	"runwatch/watch"
)

func init() {
	register(command{
		name:    "notify",
		group:   groupRead,
		summary: "tell you when a run newly needs you (bell, desktop, tmux, a command), without the dashboard",
		args:    "[PATH...]",
		paths:   true,
		about:   strings.TrimSpace(notifyHelp),
		examples: []example{
			{"one line per notification, and the terminal bell", "runwatch notify --bell on ~/.config/opencode/reports"},
			{"a desktop notification per run that needs you, and when one completes", `runwatch notify --notify-complete --notify-command 'notify-send runwatch "{{.ID}}: {{.Reason}}"'`},
		},
		completeArgs: []string{argPaths},
		define:       defineNotify,
	})
}

const notifyHelp = `
Watches the runs like the dashboard does and notifies when one enters needing you (stalled, awaiting input,
blocked, failed, a stale lock, a blocked stage), and with --notify-complete when one completes: once per
state until the run has left it, a run that flaps within seconds once, a burst of runs as one summary.
What already needs you at start-up is not news unless --notify-existing. Prints one line per notification
on stdout (for a systemd user service or a background job); the bell and desktop notifications go to the
controlling terminal when there is one. The channels default to the config file's notify: section; with
none on (no bell, desktop, tmux or command) the lines on stdout are all, and stderr says how to pick one.
A remote root (ssh://host/path, host:path) is watched through that host's runwatch, as the dashboard does; a
host that cannot be reached at start stops notify, as it fails status, and one lost later is said on stderr
and tried again.
Exit: 0 when interrupted, 1 if watching cannot start, 2 usage (--no-notify too), 6 a host never reached.

`

// notifyFlags are the notification flags of the dashboard and of notify; unset flags leave the config's
// values.
type notifyFlags struct {
	bell, desktop, tmux, command *string
	complete, existing, off      *bool
	timeout                      *time.Duration
}

func (f *notifyFlags) register(fs *flag.FlagSet) {
	f.bell = fs.String("bell", "", "terminal bell on notifications: auto (inside tmux), on, off")
	f.desktop = fs.String("desktop", "", "desktop notifications by escape sequence: auto (from the terminal), osc9, osc777, osc99, off")
	f.tmux = fs.String("tmux-message", "", "show notifications with tmux display-message: auto (inside tmux), on, off")
	f.command = fs.String("notify-command", "", "run this argv template per notification, e.g. 'notify-send runwatch \"{{.ID}}: {{.Reason}}\"'")
	f.timeout = fs.Duration("notify-timeout", 0, "kill the notify command after this long (default 10s)")
	f.complete = fs.Bool("notify-complete", false, "also notify when a run completes")
	f.existing = fs.Bool("notify-existing", false, "notify for the runs that already need you at start-up")
	f.off = fs.Bool("no-notify", false, "no notifications at all")
}

// settings puts the flags that were given over the config file's notify: section.
func (f *notifyFlags) settings(cfg config.Config) (notify.Settings, error) {
	s := cfg.Notify.Settings()
	if f == nil || f.bell == nil { // not registered: the config alone (the demo)
		return s, nil
	}
	var err error
	if *f.bell != "" {
		if s.Bell, err = notify.ParseSwitch(*f.bell); err != nil {
			return s, fmt.Errorf("--bell %v", err)
		}
	}
	if *f.tmux != "" {
		if s.TmuxMessage, err = notify.ParseSwitch(*f.tmux); err != nil {
			return s, fmt.Errorf("--tmux-message %v", err)
		}
	}
	if *f.desktop != "" {
		if s.Desktop, err = notify.ParseProtocol(*f.desktop); err != nil {
			return s, fmt.Errorf("--desktop: %v", err)
		}
	}
	if *f.command != "" {
		if err := notify.CheckHook(*f.command); err != nil {
			return s, fmt.Errorf("--notify-command: %v", err)
		}
		s.Command = *f.command
	}
	if *f.timeout > 0 {
		s.CommandTimeout = *f.timeout
	}
	s.Completions = s.Completions || *f.complete
	s.Existing = s.Existing || *f.existing
	s.Disabled = s.Disabled || *f.off
	return s, nil
}

func defineNotify(fs *flagSet) runFunc {
	var common commonFlags
	common.register(fs)
	var nf notifyFlags
	nf.register(fs.FlagSet)
	poll := fs.Duration("poll", 0, "poll at this interval instead of using inotify (e.g. 2s, for network filesystems)")
	return func(paths []string, stdout, stderr io.Writer) int {
		return runNotify(fs.env.getenv, paths, common, &nf, poll, stdout, stderr)
	}
}

func runNotify(getenv func(string) string, paths []string, common commonFlags, nf *notifyFlags, poll *time.Duration, stdout, stderr io.Writer) int {
	cfg, err := common.resolve(config.Overrides{Poll: *poll})
	if err != nil {
		return configError(stderr, "notify", err)
	}
	if err := watch.CheckPoll(*poll); err != nil {
		return usageError(stderr, "notify", "--%v", err)
	}
	settings, err := nf.settings(cfg)
	if err != nil {
		return usageError(stderr, "notify", "%v", err)
	}
	roots, code := openRoots(getenv, "notify", paths, cfg, common.given(*poll), stderr)
	if roots == nil {
		return code
	}
	// The bell and escape sequences go to the terminal this runs in, not into stdout, which may be a log.
	var term func(string)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		term = func(s string) { _, _ = io.WriteString(tty, s) }
	}
	var mu sync.Mutex // OnNotify and OnStatus come from the notifier's goroutine and its hooks'
	lastErr, noted := "", false
	n, err := notify.New(notify.Options{Settings: settings, Terminal: term, Env: getenv,
		OnNotify: func(nt notify.Notification) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stdout, "%s %s\n", nt.At.UTC().Format(time.RFC3339), nt.Line())
		},
		OnStatus: func(s notify.Status) {
			mu.Lock()
			defer mu.Unlock()
			if s.Note != "" && !noted {
				noted = true
				fmt.Fprintf(stderr, "runwatch notify: %s\n", s.Note)
			}
			if s.Err != "" && s.Err != lastErr {
				lastErr = s.Err
				fmt.Fprintf(stderr, "runwatch notify: %s\n", s.Err)
			}
		}})
	if err != nil {
		return usageError(stderr, "notify", "%v", err)
	}
	if term == nil && (settings.Bell == notify.On || (settings.Desktop != "" && settings.Desktop != notify.ProtoOff && settings.Desktop != notify.ProtoAuto)) {
		fmt.Fprintln(stderr, "runwatch notify: no terminal (/dev/tty) to ring or show desktop notifications on; those channels are off")
	}
	if settings.Disabled {
		// Notifications off in a command that exists to send them: nothing would be delivered, not even stdout's lines.
		return usageError(stderr, "notify", "%s", noChannel(settings))
	}

	src, err := roots.Watch(false)
	if err != nil {
		fmt.Fprintf(stderr, "runwatch notify: %v\n", err)
		return 1
	}
	defer src.Close()
	snap := src.Snapshot()
	n.Prime(snap)
	fmt.Fprintf(stderr, "runwatch notify: watching %s; %s\n", watchingWords(src, len(snap)), channelWords(n.Status()))
	if !n.Status().On() {
		// A service's stdout is its journal, so the lines alone are a channel; say how to get more.
		fmt.Fprintf(stderr, "runwatch notify: %s\n", noChannel(settings))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	end := func(code int) int {
		stop()
		<-done // hooks still running finish (each within its timeout)
		return code
	}
	hosts := newHostsSaid("notify")
	for {
		select {
		case u, ok := <-src.LocalUpdates():
			if !ok {
				return end(0)
			}
			n.Apply(u)
		case ru := <-src.RemoteUpdates():
			if code, stop := hosts.update(stderr, ru.Hosts); stop {
				return end(code)
			}
			observe(n, ru.Update)
		case <-ctx.Done():
			return end(0)
		}
	}
}

// watchingWords says what notify watches: the local runs read at start and how they are watched, and the
// hosts, whose runs arrive as each is reached.
func watchingWords(src *fleet.Watch, runs int) string {
	var parts []string
	if src.Local != nil {
		parts = append(parts, fmt.Sprintf("%d runs (%s)", runs, src.Local.Health().Mode))
	}
	if src.Remote != nil {
		hosts := src.Remote.Hosts()
		names := make([]string, len(hosts))
		for i, h := range hosts {
			names[i] = termsafe.Screen(h.Host)
		}
		parts = append(parts, "the runs of "+strings.Join(names, ", ")+" (ssh)")
	}
	return strings.Join(parts, " and ")
}

// dashboardNotifier runs the notifier beside the dashboard: the bell and escape sequences are written by
// the program (tea.RawMsg, between frames), and the status goes to the footer as a message.
type dashboardNotifier struct {
	*notify.Notifier
	cancel context.CancelFunc
	done   chan struct{}
}

// newDashboardNotifier is the dashboard's notifier, in the environment getenv reads ($TMUX, $TMUX_PANE).
func newDashboardNotifier(getenv func(string) string, s notify.Settings, send func(tea.Msg)) (*dashboardNotifier, error) {
	n, err := notify.New(notify.Options{Settings: s, Env: getenv,
		Terminal: func(seq string) { send(tea.RawMsg{Msg: seq}) },
		OnStatus: func(st notify.Status) { send(st) }})
	if err != nil {
		return nil, err
	}
	return &dashboardNotifier{Notifier: n, done: make(chan struct{})}, nil
}

func (d *dashboardNotifier) start(snapshot []model.Run) {
	d.Prime(snapshot)
	var ctx context.Context
	ctx, d.cancel = context.WithCancel(context.Background())
	go func() { d.Run(ctx); close(d.done) }()
}

// observe takes one watcher batch: the runs of the first read (the dashboard's watcher reads them after it
// starts) are the start-up state, primed like a snapshot rather than reported as changes.
func (d *dashboardNotifier) observe(u watch.Update) { observe(d.Notifier, u) }

// observe takes one batch, local or from a host: the runs of a first read (a progressive watcher's, a host's
// when first reached) are the start-up state, primed like a snapshot rather than reported as changes.
func observe(n *notify.Notifier, u watch.Update) {
	if u.Initial {
		n.Prime(model.RunValues(u.Changed))
		return
	}
	n.Apply(u)
}

// stop ends delivery when the dashboard quits; a hook still running is killed, not waited for.
func (d *dashboardNotifier) stop() {
	if d.cancel != nil {
		d.cancel()
		<-d.done
	}
}

// channelWords says which channels are on, for a start-up line and the footer.
func channelWords(s notify.Status) string {
	if !s.On() {
		return "no notification channel is on"
	}
	return "notifying by " + strings.Join(s.Channels, ", ")
}

// attentionWriter adds the notifier's transitions to events as "attention" lines: the same transitions
// (entering needing you once per state, flaps held back; no summaries, a script wants every run).
type attentionWriter struct {
	tracker notify.Tracker
}

func newAttentionWriter(initial []model.Run, now time.Time) *attentionWriter {
	a := &attentionWriter{tracker: notify.Tracker{Completions: true}}
	a.tracker.Prime(initial, now)
	return a
}

func (a *attentionWriter) lines(e *eventWriter, u watch.Update) error {
	for _, tr := range a.tracker.Apply(u, u.At) {
		if err := e.line(notify.EventOf(tr)); err != nil {
			return err
		}
	}
	return nil
}

// noChannel says that no notification channel is on, and how to turn one on (docs/NOTIFY.md).
func noChannel(s notify.Settings) string {
	if s.Disabled {
		return "notifications are off (--no-notify, or enabled: false under the config's notify:), which leaves notify " +
			"nothing to do; leave them on"
	}
	return "notifications go to stdout only; to be told elsewhere pick a channel: --bell on, --tmux-message on " +
		"(inside tmux), --desktop osc9|osc777|osc99 (from a terminal that shows them) or --notify-command CMD, " +
		"or under the config's notify: (docs/NOTIFY.md)"
}
