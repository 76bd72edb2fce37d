package ui

import (
	"bytes"
	"fmt"
	"os/exec"
	"runwatch/ui/text"

	tea "charm.land/bubbletea/v2"
)

type copiedMsg struct {
	n   int
	err error
}

// copyText puts text on the clipboard. The OSC 52 sequence goes to the terminal always; inside tmux it
// also goes through `tmux load-buffer -w -`, because tmux with default settings (set-clipboard external)
// does not pass an application's OSC 52 on, and load-buffer -w asks tmux itself to set the clipboard.
// What tmux answers is what the note says.
//
// OSC 52 carries the text base64-encoded in one escape sequence, and terminals cap it (often at 100 KB to
// 1 MiB) or stall on it: past maxOSC52 only tmux's buffer takes the text, and without tmux the note says
// it is too big.
func copyText(a *app, txt string) tea.Cmd {
	if txt == "" {
		a.note("nothing to copy")
		return nil
	}
	var cmds []tea.Cmd
	copyFn := a.copier()
	if len(txt) <= maxOSC52 {
		cmds = append(cmds, tea.SetClipboard(txt))
	} else if copyFn == nil {
		a.fail(fmt.Errorf("not copied: %s is too big for the terminal's clipboard (OSC 52 is sent for at most %s); inside tmux, y copies it through tmux's buffer", text.HumanBytes(int64(len(txt))), text.HumanBytes(maxOSC52)))
		return nil
	}
	if copyFn != nil {
		n := len(txt)
		cmds = append(cmds, func() tea.Msg { return copiedMsg{n: n, err: copyFn(txt)} })
	} else {
		a.note(fmt.Sprintf("sent %d bytes to the terminal clipboard (OSC 52; works where the terminal allows it)", len(txt)))
	}
	return tea.Batch(cmds...)
}

// maxOSC52 is the most y sends through OSC 52.
const maxOSC52 = 1 << 20

func (a *app) copier() func(string) error {
	if a.opts.Copy != nil {
		return a.opts.Copy
	}
	if a.opts.InTmux {
		return tmuxLoadBuffer
	}
	return nil
}

func tmuxLoadBuffer(txt string) error {
	cmd := exec.Command("tmux", "load-buffer", "-w", "-")
	cmd.Stdin = bytes.NewBufferString(txt)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tmux load-buffer: %v %s", err, bytes.TrimSpace(out))
	}
	return nil
}

func (m *Model) copied(msg copiedMsg) {
	if msg.err != nil {
		m.app.fail(fmt.Errorf("copy did not reach the clipboard: %w", msg.err))
		return
	}
	if msg.n > maxOSC52 {
		m.app.note(fmt.Sprintf("copied %s to tmux's buffer (prefix ] pastes it); the system clipboard gets it only if the terminal takes that much", text.HumanBytes(int64(msg.n))))
		return
	}
	m.app.note(fmt.Sprintf("copied %d bytes (tmux buffer and clipboard)", msg.n))
}
