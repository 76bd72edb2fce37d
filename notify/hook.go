package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"runwatch/model"
	"runwatch/state/launch"
)

// DefaultHookTimeout bounds one run of the command hook.
const DefaultHookTimeout = 10 * time.Second

// HookData is what a notify.command template sees. Text read from run files (.ID, .Reason, .Title, .Line)
// has been through Plain; paths are exact, so they can be used as paths.
type HookData struct {
	// Event is "attention", "completed" or "summary" (several runs at once).
	Event     string
	ID        string // for a summary: "12 runs"
	Reason    string // for a summary: the runs and why, "a (stale lock), b (failed), and 3 more"
	Code      string // the attention code (stale-lock, failed, ...); empty for a summary
	Action    string // what settles it: unlock, step, retry, brief, ...
	Command   string // the same as a runwatch command line
	Kind      string
	Status    string
	Title     string
	Dir       string
	StateFile string
	// Count is the number of runs the notification covers (1 unless a summary).
	Count int
	// Headline and Line are the notification's title and the whole of it as one line.
	Headline string
	Line     string
	// IDs are the run ids a summary covers.
	IDs []string
}

// NewHookData builds the template fields of a notification.
func NewHookData(n Notification) HookData {
	d := HookData{Count: len(n.Items), Headline: n.Title(), Line: n.Line()}
	for _, it := range n.Items {
		d.IDs = append(d.IDs, Plain(it.Run.ID))
	}
	if n.Summary() {
		d.Event = "summary"
		d.ID = fmt.Sprintf("%d runs", len(n.Items))
		d.Reason = n.Body()
		return d
	}
	it := n.Items[0]
	r := it.Run
	d.Event = string(it.Kind)
	d.ID, d.Code, d.Action = Plain(r.ID), r.Attention.Code, string(r.Attention.Action)
	d.Reason, d.Command = Plain(r.Attention.Reason), Plain(r.Attention.Command)
	if it.Kind == KindCompleted {
		d.Reason = "completed"
	}
	d.Kind, d.Status, d.Title, d.Dir, d.StateFile = string(r.Kind), string(r.Status), Plain(r.Title), r.Dir, r.StatePath
	return d
}

// Hook is the command hook: an argv template rendered per notification and run without a shell.
type Hook struct {
	Template string
	Timeout  time.Duration
}

// CheckHook reports a template that cannot render, at start-up rather than at the first notification.
func CheckHook(tmpl string) error {
	if err := launch.CheckArgv("notify.command", tmpl); err != nil {
		return err
	}
	// Render it once over a sample, so an unknown field is reported now.
	_, err := launch.Argv("notify.command", tmpl, NewHookData(sampleNotification()))
	return err
}

// Argv renders the command for n.
func (h Hook) Argv(n Notification) ([]string, error) {
	return launch.Argv("notify.command", h.Template, NewHookData(n))
}

// maxHookOutput is how much of a failed hook's output is kept for the message.
const maxHookOutput = 4 << 10

// Run renders and runs the command, waiting at most Timeout. Its output is kept only to explain a failure.
func (h Hook) Run(ctx context.Context, n Notification) error {
	argv, err := h.Argv(n)
	if err != nil {
		return err
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out limitedBuffer
	left, err := runHook(ctx, argv, &out)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("notify.command %s: killed after %s, with every process it started", argv[0], timeout)
	case err == nil && len(left) > 0:
		return fmt.Errorf("notify.command %s exited leaving %d process(es) running (%s); they were ended: a hook must not leave work in the background",
			argv[0], len(left), strings.Join(left, ", "))
	case err == nil:
		return nil
	}
	msg := strings.TrimSpace(out.String())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	if msg != "" {
		return fmt.Errorf("notify.command %s: %v: %s", argv[0], err, Plain(msg))
	}
	return fmt.Errorf("notify.command %s: %v", argv[0], err)
}

type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxHookOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func sampleNotification() Notification {
	r := model.Run{ID: "sample", Kind: model.KindResumable, Status: model.StatusStalled, Dir: "/runs/sample",
		StatePath: "/runs/sample/state.env"}
	r.Attention = model.Attention{NeedsYou: true, Code: model.AttentionStaleLock, Reason: "stale lock",
		Action: model.ActionUnlock, Command: "runwatch unlock sample"}
	return Notification{Items: []Transition{{Kind: KindAttention, Run: r}}}
}
