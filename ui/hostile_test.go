// Tests that hostile text in run files never reaches the terminal as anything but plain text and SGR.

package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"runwatch/model"
	"runwatch/termsafe"
	"runwatch/ui/app"
)

// hostile strings: every kind of sequence a log line or a run file could carry to act on a terminal.
var hostile = []string{
	"\x1b]52;c;cm0gLXJmIH4=\x07clip",                // clipboard write
	"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",      // hyperlink
	"\x1b[2J\x1b[Hclear",                            // clear screen, cursor home
	"\x1bP+q544e\x1b\\dcs",                          // DCS (termcap query)
	"\x1b_Gi=1;AAAA\x1b\\apc",                       // APC (graphics)
	"\u009b31mc1csi\u009d0;title\u009c",             // 8-bit CSI and OSC
	"bell\x07bs\x08cr\rnl\nesc\x1b",                 // C0 controls, lone ESC
	"\xff\xfe invalid utf8",                         // invalid UTF-8
	"rtl\u202eoverride",                             // bidi override
	"zw\u200bsp\u2060wj\ufeffbom\u180emvs\u00adshy", // zero-width and other hidden format characters
	"tab\there",
}

func hostileRun(i int) model.Run {
	h := func(j int) string { return hostile[(i+j)%len(hostile)] }
	at := testNow.Add(-time.Hour)
	r := model.Run{
		ID: "run-" + h(0), Kind: model.KindJonggrang, Title: h(1), Dir: "/h/" + h(2), StatePath: fmt.Sprintf("/h/%d/MANIFEST.yaml", i),
		Status: model.StatusStalled, RawStatus: h(3), CurrentStage: h(4), UpdatedAt: at,
		Stages: []model.Stage{
			model.Stage{Key: h(4), Name: h(5), Status: model.StageFailed, StartedAt: &at,
				Checklist: []model.ChecklistItem{{Key: h(8), Raw: h(9)}}}.WithRare(model.StageRare{Error: h(6), RawStatus: h(7)}),
			model.Stage{Key: "2", Name: h(1), Status: model.StageSkipped}.WithRare(model.StageRare{SkipReason: h(2)}),
		},
		Flags:      []model.Flag{{Group: h(3), Name: h(4), Raw: h(5)}},
		Locks:      []model.Lock{{Path: h(6), Holder: h(7), Host: h(8), PID: 7, Verdict: model.VerdictStale, Reasons: []string{h(9)}, AcquiredAt: &at}},
		Problems:   []model.Problem{{Severity: model.SeverityError, Code: h(0), Message: h(1)}},
		Gates:      []model.Gate{{Name: h(2), Status: h(3), Detail: h(4), Blocked: true}},
		CrashSigns: []string{h(5)},
		Jonggrang: &model.JonggrangDetail{
			PhaseOutputs: []model.PhaseOutput{{File: h(6), Phase: h(4), Role: h(7), Status: h(8), Summary: []string{h(9)}, Error: h(0), Timestamp: &at}},
			Agents:       []model.Agent{{ID: h(1), Role: h(2), Status: h(3), StartedAt: &at}},
			ProgressTail: []string{h(4), h(5)},
		},
		Resumable: &model.ResumableDetail{ResumeHint: h(6)},
	}
	return r
}

// TestHostileTextNeverReachesTerminal renders hostile run fields and log lines through every view and
// checks that the only escape sequences in the frame are runwatch's own SGR styling.
func TestHostileTextNeverReachesTerminal(t *testing.T) {
	t.Parallel()
	var runList []model.Run
	for i := range hostile {
		runList = append(runList, hostileRun(i))
	}
	logRun := resumableRun()
	logRun.ID = "log-" + hostile[0]
	runList = append(runList, logRun)
	var logLines []string
	for _, h := range hostile {
		logLines = append(logLines, "[2026-11-30T11:00:00Z] stage_blocked "+h, "  "+h)
	}
	for _, size := range [][2]int{{140, 40}, {90, 30}, {50, 20}} {
		m := newTestModel(t, size[0], size[1], runList, app.Options{Theme: "dark", OpenLog: memOpener(logLines)})
		for i := 0; i < len(runList); i++ {
			for _, k := range []string{"tab", "j", "tab", "j", "tab", "e", "?"} {
				m = send(t, m, press(k))
				assertOnlySGR(t, m.View().Content)
			}
			m = send(t, m, press("?"))
			m = send(t, m, press("esc"))
			m = send(t, m, press("j"))
		}
		m = send(t, m, press("/"))
		m = send(t, m, press("\x1b"))
		assertOnlySGR(t, m.View().Content)
		m = send(t, m, app.ErrorMsg{Err: fmt.Errorf("watcher: %s", hostile[0])})
		assertOnlySGR(t, m.View().Content)
	}
}

func assertOnlySGR(t *testing.T, frame string) {
	t.Helper()
	for i := 0; i < len(frame); i++ {
		c := frame[i]
		switch {
		case c == 0x1b:
			j := i + 1
			if j >= len(frame) || frame[j] != '[' {
				t.Fatalf("non-CSI escape at %d: %q", i, excerpt(frame, i))
			}
			j++
			for j < len(frame) && (frame[j] >= '0' && frame[j] <= '9' || frame[j] == ';' || frame[j] == ':') {
				j++
			}
			if j >= len(frame) || frame[j] != 'm' {
				t.Fatalf("CSI other than SGR at %d: %q", i, excerpt(frame, i))
			}
			i = j
		case c == '\n':
		case c < 0x20 || c == 0x7f:
			t.Fatalf("control byte %#x at %d: %q", c, i, excerpt(frame, i))
		}
	}
	if !utf8.ValidString(frame) {
		t.Fatal("frame is not valid UTF-8")
	}
	for _, r := range frame {
		if r >= 0x80 && termsafe.Hidden(r) {
			t.Fatalf("control rune %U in frame", r)
		}
	}
	if strings.Contains(frame, "\x1b]") {
		t.Fatal("OSC in frame")
	}
}

func excerpt(s string, i int) string {
	return s[max(0, i-20):min(len(s), i+30)]
}
