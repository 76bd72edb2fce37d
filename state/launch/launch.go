// Package launch renders and starts a run's resume command (config `resume_command`, one Go text/template
// per convention).
//
// The template is split into words the way a shell would (quotes and backslashes), before any value is
// inserted, and each word renders to exactly one argument. No shell ever sees the result, so a run's id,
// title or paths cannot inject anything, whatever they contain. Write `sh -c '...' sh {{.Dir}}` when you
// need shell features, and pass values as positional parameters.
//
// The dashboard key does:
//
//	c, err := launch.Prepare(cfg.ResumeCommand, run, env, tmux) // errors.Is(err, launch.ErrNoTemplate): show launch.HowToConfigure
//	confirm(c.String())                                         // the exact command, shell-quoted
//	if c.InTmux { l, err = c.LaunchInTmux(ctx) }                // a new tmux window (l its pane); the dashboard stays
//	else { return tea.ExecProcess(c.ForegroundCmd(), done) }    // dashboard suspended, stdio attached, restored after
//
// RunForeground runs the same *exec.Cmd with given stdio, for callers outside Bubble Tea and for tests.
package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"text/template"
	"time"

	"runwatch/model"
	"runwatch/shellword"
	"runwatch/state/brief"
	"runwatch/suggest"
	"runwatch/tmuxsafe"
)

// ErrNoTemplate means the config has no resume_command for the run's convention.
var ErrNoTemplate = errors.New("no resume command configured")

// Configured reports whether templates hold a resume command for runs of kind (else Prepare says
// ErrNoTemplate).
func Configured(templates map[string]string, kind model.Kind) bool {
	return strings.TrimSpace(templates[string(kind)]) != ""
}

// HowToConfigure is the help shown when no template is configured.
const HowToConfigure = `Set a resume command per convention in the config file ($XDG_CONFIG_HOME/runwatch/config.yaml),
for example:

  resume_command:
    jonggrang: 'claude {{.Brief}}'
    resumable: 'sh -c "cd \"\$1\" && exec opencode" sh {{.RepoRoot}}'

Each word becomes exactly one argument and no shell runs it, so values cannot inject commands; for shell
features use sh -c and pass values as "$1", "$2". The command starts in .WorkDir: the jonggrang project, or
the resumable run's REPO_ROOT when it exists here, else the run folder. Fields: .ID .Kind .Dir .WorkDir
.StatePath .ProjectRoot .Title .Status .CurrentStage .CurrentStageName .LogPath .RunID .TaskName .RepoRoot
.Brief (the resume brief as Markdown), and (index .Keys "NAME") for any state.env key.`

// Data is what a resume_command template sees.
type Data struct {
	ID               string
	Kind             string
	Dir              string
	WorkDir          string
	StatePath        string
	ProjectRoot      string
	Title            string
	Status           string
	CurrentStage     string
	CurrentStageName string
	LogPath          string
	// Resumable runs only.
	RunID    string
	TaskName string
	RepoRoot string
	Keys     map[string]string

	run model.Run
	env model.Env
}

// Brief is the run's resume brief as Markdown, built only when a template asks for it.
func (d Data) Brief() string { return brief.Build(d.run, d.env).Markdown() }

// NewData collects the template fields of run.
func NewData(run model.Run, env model.Env) Data {
	d := Data{ID: run.ID, Kind: string(run.Kind), Dir: run.Dir, StatePath: run.StatePath, ProjectRoot: run.ProjectRoot,
		Title: run.Title, Status: string(run.Status), CurrentStage: run.CurrentStage, Keys: map[string]string{},
		run: run, env: env}
	if s := run.Stage(run.CurrentStage); s != nil && run.CurrentStage != "" {
		d.CurrentStageName = s.Name
	}
	if run.Log != nil {
		d.LogPath = run.Log.Path
	}
	if r := run.Resumable; r != nil {
		d.RunID, d.TaskName = r.RunID, r.TaskName
		for _, kv := range r.Keys.All() {
			d.Keys[kv.Key] = kv.Value
		}
		d.RepoRoot = d.Keys["REPO_ROOT"]
	}
	d.WorkDir = workDir(run, d.RepoRoot)
	return d
}

// workDir is where the resume command starts: the jonggrang project (agents work there), or the resumable
// run's repository when it exists here, else the run folder.
func workDir(run model.Run, repoRoot string) string {
	if run.Kind == model.KindJonggrang && run.ProjectRoot != "" {
		return run.ProjectRoot
	}
	if repoRoot != "" {
		if st, err := os.Stat(repoRoot); err == nil && st.IsDir() {
			return repoRoot
		}
	}
	return run.Dir
}

// Command is a rendered resume command, ready to confirm and launch.
type Command struct {
	Kind     string
	Template string
	Argv     []string
	Dir      string
	// InTmux is true when runwatch runs inside tmux ($TMUX set): the command then opens in a new window.
	InTmux bool
	// tmux is $TMUX as Prepare found it: the server and session the window opens in.
	tmux string
	// WindowName names the tmux window.
	WindowName string
	// StatePath is the run's state file, which the record of a launch names.
	StatePath string
}

// Prepare renders the template configured for run's convention, to open inside the tmux that tmux ($TMUX's
// value, "" outside tmux) names.
func Prepare(templates map[string]string, run model.Run, env model.Env, tmux string) (*Command, error) {
	tmpl := strings.TrimSpace(templates[string(run.Kind)])
	if !Configured(templates, run.Kind) {
		return nil, fmt.Errorf("%w for %s runs", ErrNoTemplate, run.Kind)
	}
	d := NewData(run, env)
	argv, err := Render(tmpl, d)
	if err != nil {
		return nil, err
	}
	return &Command{Kind: string(run.Kind), Template: tmpl, Argv: argv, Dir: d.WorkDir, InTmux: tmux != "", tmux: tmux,
		WindowName: windowName(run.ID), StatePath: run.StatePath}, nil
}

// Check parses a resume command template and renders it over a sample run, so a config loader reports a
// bad one, or a misspelt field, at load time and not when a person presses X; errors start with name.
func Check(name, tmpl string) error {
	if err := CheckArgv(name, tmpl); err != nil {
		return err
	}
	sample := model.Run{ID: "sample-20260101T000000Z", Kind: model.KindResumable, Dir: "/sample", StatePath: "/sample/state.env",
		Resumable: &model.ResumableDetail{}}
	_, err := Argv(name, tmpl, NewData(sample, model.Env{}))
	if m := unknownField.FindStringSubmatch(fmt.Sprint(err)); m != nil {
		fields := dataFields()
		msg := fmt.Sprintf("%s: no field .%s", name, m[1])
		if near := suggest.Nearest(m[1], fields); len(near) > 0 {
			msg += " (did you mean ." + strings.Join(near, " or .") + "?)"
		}
		return fmt.Errorf("%s; the fields are .%s", msg, strings.Join(fields, " ."))
	}
	return err
}

var unknownField = regexp.MustCompile(`can't evaluate field (\w+) in type launch\.Data`)

// dataFields are the names a template can use, read from Data itself so the list cannot fall behind.
func dataFields() []string {
	t := reflect.TypeFor[Data]()
	var out []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			out = append(out, f.Name)
		}
	}
	return append(out, "Brief")
}

// Render splits tmpl into words and renders each over d into one argument.
func Render(tmpl string, d Data) ([]string, error) { return Argv("resume_command", tmpl, d) }

// CheckArgv parses an argv template (see Argv) without rendering it; errors start with name, the config key.
func CheckArgv(name, tmpl string) error {
	words, err := splitWords(tmpl)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, w := range words {
		if _, err := parseWord(name, w.text); err != nil {
			return err
		}
	}
	return nil
}

// Argv renders a command template over data: the template is split into words the way a shell would,
// before any value is inserted, and each word renders to exactly one argument, so no value can add, split
// or quote arguments. Every command runwatch renders from config (resume_command, notify.command) goes
// through here. Errors start with name, the config key.
func Argv(name, tmpl string, data any) ([]string, error) {
	words, err := splitWords(tmpl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var argv []string
	for _, w := range words {
		t, err := parseWord(name, w.text)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		if err := t.Execute(&out, data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if out.Len() == 0 && !w.quoted {
			continue // like an unquoted empty expansion in a shell
		}
		argv = append(argv, out.String())
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: the template renders to an empty command", name)
	}
	return argv, nil
}

func parseWord(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// ForegroundCmd is the command for tea.ExecProcess: stdio is left nil so Bubble Tea attaches the terminal.
func (c *Command) ForegroundCmd() *exec.Cmd {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	return cmd
}

// RunForeground runs ForegroundCmd with the given stdio and waits for it.
func (c *Command) RunForeground(stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := c.ForegroundCmd()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("resume command %s: %w", c.Argv[0], err)
	}
	return nil
}

// tmuxTimeout bounds the tmux client call; the window's command itself runs on, detached from us.
const tmuxTimeout = 10 * time.Second

// InDirCommand is runwatch's hidden command that a tmux window runs: `runwatch __resume-in DIR -- ARGV...`
// changes to DIR and execs ARGV (ExecInDir). tmux expands its -c folder as a format, so a work folder holding
// `#(cmd)` would run cmd; words after `--` are never expanded, so the folder travels as one of those.
const InDirCommand = "__resume-in"

// TmuxArgs are the arguments of `tmux` that open the command in a new window of the current session, started
// in c.Dir by runwatch itself rather than by tmux's -c.
func (c *Command) TmuxArgs() ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find runwatch's own binary to start the window in %s: %w", c.Dir, err)
	}
	// -P -F: tmux prints the new pane, which the launch records so the run's agent can be found there.
	args := []string{"new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-n", c.WindowName, "--"}
	for _, a := range append([]string{self, InDirCommand, c.Dir, "--"}, c.Argv...) {
		args = append(args, tmuxsafe.Arg(a))
	}
	return args, nil
}

// ExecInDir is InDirCommand: args are DIR, "--", then the command. It returns only when it cannot start the
// command, after saying why and waiting for Enter, so the window does not vanish before it is read.
func ExecInDir(args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintf(stderr, "runwatch %s: want DIR -- COMMAND...\n", InDirCommand)
		return 2
	}
	dir, argv := args[0], args[2:]
	err := os.Chdir(dir)
	if err == nil {
		var path string
		if path, err = exec.LookPath(argv[0]); err == nil {
			env := append(os.Environ(), "PWD="+dir) // the last PWD wins; shells trust it for their prompt
			err = syscall.Exec(path, argv, env)
		}
	}
	fmt.Fprintf(stderr, "runwatch: cannot start the resume command %q in %q: %v\n(press Enter to close this window)\n", argv[0], dir, err)
	io.ReadAll(io.LimitReader(stdin, 1))
	return 1
}

// LaunchInTmux opens the command in a new tmux window and returns once tmux has created it, with the pane it
// opened.
func (c *Command) LaunchInTmux(ctx context.Context) (Launched, error) {
	ctx, cancel := context.WithTimeout(ctx, tmuxTimeout)
	defer cancel()
	args, err := c.TmuxArgs()
	if err != nil {
		return Launched{}, err
	}
	out, err := tmuxsafe.RunIn(ctx, append(os.Environ(), "TMUX="+c.tmux), nil, args...)
	if err != nil {
		return Launched{}, err
	}
	l := Launched{StatePath: c.StatePath, At: time.Now().UTC()}
	l.Socket, _, _ = strings.Cut(c.tmux, ",")
	if _, err := fmt.Sscanf(string(out), "%s %d", &l.PaneID, &l.PanePID); err != nil || !strings.HasPrefix(l.PaneID, "%") {
		return Launched{}, fmt.Errorf("tmux new-window opened a window but did not say its pane (%q)", strings.TrimSpace(string(out)))
	}
	return l, nil
}

// String is the exact command, shell-quoted, for the confirmation.
func (c *Command) String() string { return shellword.Line(c.Argv) }

var windowUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// windowName keeps tmux window names short and free of format characters (#) and controls.
func windowName(id string) string {
	name := windowUnsafe.ReplaceAllString(id, "-")
	if len(name) > 24 {
		name = name[:24]
	}
	return "resume " + name
}
