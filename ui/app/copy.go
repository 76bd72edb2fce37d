// The clipboard (y): OSC 52, and tmux's buffer inside tmux, with a note saying what reached which.

package app

import (
	"context"
	"fmt"
	"strings"

	"runwatch/tmuxsafe"
	"runwatch/ui/text"

	tea "charm.land/bubbletea/v2"
)

type CopiedMsg struct {
	N   int
	Err error
}

// CopyText puts text on the clipboard. The OSC 52 sequence goes to the terminal always; inside tmux it
// also goes through `tmux load-buffer -w -`, because tmux with default settings (set-clipboard external)
// does not pass an application's OSC 52 on, and load-buffer -w asks tmux itself to set the clipboard.
// What tmux answers is what the note says.
//
// OSC 52 carries the text base64-encoded in one escape sequence, and terminals cap it (often at 100 KB to
// 1 MiB) or stall on it: past maxOSC52 only tmux's buffer takes the text, and without tmux the note says
// it is too big.
func CopyText(a *App, txt string) tea.Cmd {
	if txt == "" {
		a.Note("nothing to copy")
		return nil
	}
	var cmds []tea.Cmd
	copyFn := a.copier()
	if len(txt) <= MaxOSC52 {
		cmds = append(cmds, tea.SetClipboard(txt))
	} else if copyFn == nil {
		a.Fail(fmt.Errorf("not copied: %s is too big for the terminal's clipboard (OSC 52 is sent for at most %s); inside tmux, y copies it through tmux's buffer", text.HumanBytes(int64(len(txt))), text.HumanBytes(MaxOSC52)))
		return nil
	}
	if copyFn != nil {
		n := len(txt)
		cmds = append(cmds, func() tea.Msg { return CopiedMsg{N: n, Err: copyFn(txt)} })
	} else {
		a.Note(fmt.Sprintf("sent %d bytes to the terminal clipboard (OSC 52; works where the terminal allows it)", len(txt)))
	}
	return tea.Batch(cmds...)
}

// maxOSC52 is the most y sends through OSC 52.
const MaxOSC52 = 1 << 20

func (a *App) copier() func(string) error {
	if a.Opts.Copy != nil {
		return a.Opts.Copy
	}
	if a.Opts.InTmux {
		return tmuxLoadBuffer
	}
	return nil
}

func tmuxLoadBuffer(txt string) error {
	_, err := tmuxsafe.Run(context.Background(), strings.NewReader(txt), "load-buffer", "-w", "-")
	return err
}
