package notify

import (
	"context"
	"encoding/base64"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"runwatch/tmuxsafe"
)

// Protocol is an escape sequence for desktop notifications.
type Protocol string

const (
	ProtoOff    Protocol = "off"
	ProtoAuto   Protocol = "auto"
	ProtoOSC9   Protocol = "osc9"   // iTerm2's OSC 9 (also WezTerm, ghostty): body only
	ProtoOSC777 Protocol = "osc777" // rxvt's OSC 777 notify (VTE, WezTerm, ghostty, foot): title and body
	ProtoOSC99  Protocol = "osc99"  // kitty's OSC 99: title and body, base64 so nothing in them is parsed
)

// Protocols are the values `notify.desktop` and --desktop accept.
var Protocols = []Protocol{ProtoAuto, ProtoOSC9, ProtoOSC777, ProtoOSC99, ProtoOff}

// ParseProtocol checks a configured value.
func ParseProtocol(s string) (Protocol, error) {
	for _, p := range Protocols {
		if string(p) == s {
			return p, nil
		}
	}
	words := make([]string, len(Protocols))
	for i, p := range Protocols {
		words[i] = string(p)
	}
	return "", fmt.Errorf("%q is not a desktop notification protocol (want %s)", s, strings.Join(words, ", "))
}

// Identity is what runwatch knows about the terminal it draws on: its environment and, inside tmux, what
// tmux knows about the outer terminal of the client (TERM_PROGRAM there says only "tmux").
type Identity struct {
	Env func(string) string
	// ClientTermName and ClientTermType are tmux's client_termname (the outer TERM) and client_termtype
	// (the terminal's answer to XTVERSION, e.g. "kitty(0.26.5)", "WezTerm 20230408").
	ClientTermName, ClientTermType string
}

// Detect picks the desktop notification protocol of the terminal, and says what it went by. Terminals that
// are not known to show these notifications get none: an unknown OSC is ignored by a good terminal, but some
// print it.
func Detect(id Identity) (Protocol, string) {
	env := id.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	if env("KITTY_WINDOW_ID") != "" {
		return ProtoOSC99, "KITTY_WINDOW_ID is set"
	}
	if env("ITERM_SESSION_ID") != "" {
		return ProtoOSC9, "ITERM_SESSION_ID is set"
	}
	if env("WEZTERM_PANE") != "" {
		return ProtoOSC777, "WEZTERM_PANE is set"
	}
	sources := []struct{ name, value string }{
		{"TERM_PROGRAM", env("TERM_PROGRAM")}, {"TERM", env("TERM")},
		{"tmux client_termtype", id.ClientTermType}, {"tmux client_termname", id.ClientTermName},
	}
	table := []struct {
		word  string
		proto Protocol
	}{
		{"kitty", ProtoOSC99}, {"iterm", ProtoOSC9}, {"wezterm", ProtoOSC777}, {"ghostty", ProtoOSC777},
		{"foot", ProtoOSC777}, {"rxvt", ProtoOSC777},
	}
	for _, s := range sources {
		v := strings.ToLower(s.value)
		for _, e := range table {
			if v != "" && strings.Contains(v, e.word) {
				return e.proto, fmt.Sprintf("%s is %s", s.name, s.value)
			}
		}
	}
	if env("VTE_VERSION") != "" {
		return ProtoOSC777, "VTE_VERSION is set"
	}
	return ProtoOff, "no terminal known to show desktop notifications"
}

// desktopSequence is the escape sequence that shows n as a desktop notification. Every piece of text in it
// went through Plain, and OSC 777's fields lose their separator, so a run id or reason cannot end the
// sequence, start another, or move text between fields.
func desktopSequence(p Protocol, n Notification, id int) string {
	title, body := n.Title(), n.Body()
	switch p {
	case ProtoOSC9:
		return ansi.Notify(title + ": " + body)
	case ProtoOSC777:
		field := func(s string) string { return strings.ReplaceAll(s, ";", ",") }
		return "\x1b]777;notify;" + field(title) + ";" + field(body) + "\x07"
	case ProtoOSC99:
		b64 := base64.StdEncoding.EncodeToString
		ident := fmt.Sprintf("runwatch%d", id)
		return "\x1b]99;i=" + ident + ":d=0:e=1:p=title;" + b64([]byte(title)) + "\x1b\\" +
			"\x1b]99;i=" + ident + ":d=1:e=1:p=body;" + b64([]byte(body)) + "\x1b\\"
	}
	return ""
}

// tmuxTimeout bounds every call of the tmux client.
const tmuxTimeout = 5 * time.Second

// Tmux runs tmux client commands for the pane runwatch runs in. Tests replace Run.
type Tmux struct {
	Pane string // $TMUX_PANE
	Run  func(ctx context.Context, args ...string) (string, error)
}

func runTmux(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, tmuxTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", args...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("tmux %s: %s", args[0], msg)
	}
	return string(out), nil
}

func (t Tmux) run(ctx context.Context, args ...string) (string, error) {
	if t.Run != nil {
		return t.Run(ctx, args...)
	}
	return runTmux(ctx, args...)
}

func (t Tmux) target() []string {
	if t.Pane != "" {
		return []string{"-t", t.Pane}
	}
	return nil
}

// Passthrough reports whether tmux forwards a DCS passthrough sequence from this pane to the outer
// terminal (allow-passthrough on or all: a pane option, inherited from the window and global options).
func (t Tmux) Passthrough(ctx context.Context) (bool, error) {
	out, err := t.run(ctx, append(append([]string{"show-options", "-Apv"}, t.target()...), "allow-passthrough")...)
	if err != nil || strings.TrimSpace(out) == "" {
		out, err = t.run(ctx, "show-options", "-gv", "allow-passthrough")
	}
	if err != nil {
		return false, err
	}
	v := strings.TrimSpace(out)
	return v == "on" || v == "all", nil
}

// Client is what tmux knows about the terminal of the client showing this pane.
func (t Tmux) Client(ctx context.Context) (name, typ string) {
	out, err := t.run(ctx, append(append([]string{"display-message", "-p"}, t.target()...), "#{client_termname}\t#{client_termtype}")...)
	if err != nil {
		return "", ""
	}
	name, typ, _ = strings.Cut(strings.TrimRight(out, "\n"), "\t")
	return name, typ
}

// Display shows text in the status line of the client showing this pane for a few seconds. tmux expands
// the message (strftime, formats: #(...) would run a shell command), so it goes through tmuxsafe.Message and
// shows as is.
func (t Tmux) Display(ctx context.Context, text string) error {
	msg := tmuxsafe.Message(Plain(text))
	_, err := t.run(ctx, append(append([]string{"display-message", "-d", "5000"}, t.target()...), msg)...)
	return err
}
