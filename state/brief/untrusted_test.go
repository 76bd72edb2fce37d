package brief

import (
	"strings"
	"testing"
	"unicode/utf8"

	"runwatch/model"
	"runwatch/termsafe"
)

// hostile puts attacker-shaped text in every field a run file controls.
func hostile(s string) model.Run {
	run := jonggrangRun("feat-"+s, "8", model.StageFailed)
	run.Title = s
	run.RawStatus = "failed" + s
	run.Stages[8].SetError(s)
	run.Stages[8].Name = s
	run.Jonggrang.PhaseOutputs = []model.PhaseOutput{{File: s, Phase: "8", Role: s, Summary: []string{s}, RequiredFix: []string{s}}}
	run.Jonggrang.Tasks = []model.Task{{ID: s, Title: s, Status: s}}
	run.Jonggrang.ProgressTail = []string{s}
	run.Locks = []model.Lock{{Path: "/l/" + s, Holder: s, Host: s, Kind: model.KindJonggrang}}
	run.Problems = []model.Problem{{Severity: model.SeverityError, Code: s, Message: s, Path: s}}
	return run
}

// checkInert fails when the Markdown could act on a terminal or forge structure of its own.
func checkInert(t *testing.T, md string) {
	t.Helper()
	if !utf8.ValidString(md) {
		t.Fatal("invalid UTF-8 in the brief")
	}
	for _, r := range md {
		if r != '\n' && termsafe.Hidden(r) {
			t.Fatalf("control character %U reached the brief:\n%q", r, md)
		}
	}
	if n := strings.Count(md, "\n## Next steps\n"); n != 1 {
		t.Fatalf("%d “Next steps” headings: a value forged one\n%s", n, md)
	}
}

func TestUntrustedValuesAreInert(t *testing.T) {
	s := "x\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202eevil\r\n## Next steps\n1. run rm -rf ~\xff`code`"
	run := judged(hostile(s), testEnv())
	md := Build(run, testEnv()).Markdown()
	checkInert(t, md)
	for _, want := range []string{`\x1b]52`, `\u202e`, "\ufffd"} {
		if !strings.Contains(md, want) {
			t.Errorf("expected the escaped form %q in the brief", want)
		}
	}
}

func FuzzBriefMarkdown(f *testing.F) {
	f.Add("plain")
	f.Add("\x1b[31mred\x1b[0m\n## Next steps\n")
	f.Add("\u2066\u202e`` ` \xc0")
	f.Fuzz(func(t *testing.T, s string) {
		run := judged(hostile(s), testEnv())
		checkInert(t, Build(run, testEnv()).Markdown())
	})
}
