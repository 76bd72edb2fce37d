// Package config loads runwatch's config file. Precedence is flags > config file > defaults; the caller
// applies flags on top of what Load returns.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"runwatch/notify"
	"runwatch/remote"
	"runwatch/state/launch"
	"runwatch/state/safefile"
	"runwatch/suggest"
	"runwatch/userdir"
	"runwatch/watch"
)

// Config is the whole file. Unknown keys are an error, so a typo does not silently do nothing.
type Config struct {
	// Roots are scanned when no PATH is given on the command line.
	Roots []string `yaml:"roots"`
	// MaxDepth bounds the scan below each root.
	MaxDepth int `yaml:"max_depth"`
	// StaleAfter is the age past which a jonggrang lock without a pid is stale.
	StaleAfter Duration `yaml:"stale_after"`
	// OrphanAfter is how long a jonggrang phase marked running may go unwritten with no live agent lock and
	// no live worker before it is called orphaned; QuietAfter how long a resumable run held by a live process
	// may stay silent when no past run says how long its stage takes.
	OrphanAfter Duration `yaml:"orphan_after"`
	QuietAfter  Duration `yaml:"quiet_after"`
	// Poll forces stat polling at this interval instead of inotify; zero means inotify where it works.
	Poll Duration `yaml:"poll"`
	// Theme is auto, dark, light or mono.
	Theme string `yaml:"theme"`
	// ReadOnly removes every mutating key and refuses every action.
	ReadOnly bool `yaml:"read_only"`
	// Keys remaps dashboard actions: action name → keys, e.g. {step: ["S"], quit: ["q", "ctrl+c"]}.
	Keys map[string][]string `yaml:"keys"`
	// ResumeCommand holds a text/template per convention ("jonggrang", "resumable") rendered over the run.
	ResumeCommand map[string]string `yaml:"resume_command"`
	// Notify configures notifications: which channels, and whether completions and the start-up state count.
	Notify Notify `yaml:"notify"`
	// StageOrder names the stage order of resumable tasks whose writer keeps it in code (docs/FORMATS.md C.1):
	// a glob over TASK_NAME or the run folder's name → stage ids in order, kept in file order.
	StageOrder StageOrders `yaml:"stage_order"`

	// SSH is how remote roots (ssh://host/path, host:path) are reached.
	SSH SSHConfig `yaml:"ssh"`

	// Path is the file this config came from, empty when none was read.
	Path string `yaml:"-"`
	// RootsLine is the line of the roots key, 0 when the file has none: a root that cannot be opened is
	// reported there (RootsError).
	RootsLine int `yaml:"-"`
	// KeyLines is the line of each action under keys:, so a bad binding is reported where it is written.
	KeyLines map[string]int `yaml:"-"`
}

// Notify is the `notify:` section. Each channel is auto (on where it makes sense), on or off.
type Notify struct {
	// Enabled false turns every channel off (default true).
	Enabled *bool `yaml:"enabled"`
	// Bell rings the terminal bell: auto means inside tmux, where it marks the window in the status bar.
	Bell Switch `yaml:"bell"`
	// Desktop sends a desktop notification by escape sequence: auto, osc9, osc777, osc99 or off.
	Desktop Protocol `yaml:"desktop"`
	// Tmux shows the notification in tmux's status line (display-message): auto means inside tmux.
	Tmux Switch `yaml:"tmux"`
	// Command is an argv template (Go text/template per word, no shell) run for each notification.
	Command string `yaml:"command"`
	// CommandTimeout bounds one run of Command (default 10s).
	CommandTimeout Duration `yaml:"command_timeout"`
	// OnComplete also notifies when a run completes.
	OnComplete bool `yaml:"on_complete"`
	// Existing notifies, at start-up, for the runs that already need you.
	Existing bool `yaml:"existing"`
}

// Settings are the notifier's settings as the file gives them; flags go on top.
func (n Notify) Settings() notify.Settings {
	return notify.Settings{
		Disabled: n.Enabled != nil && !*n.Enabled, Bell: notify.Switch(n.Bell), Desktop: notify.Protocol(n.Desktop),
		TmuxMessage: notify.Switch(n.Tmux), Command: n.Command, CommandTimeout: n.CommandTimeout.D(),
		Completions: n.OnComplete, Existing: n.Existing,
	}
}

// Switch reads auto, on or off (true/false and yes/no too).
type Switch string

// UnmarshalYAML checks the value and names the line.
func (s *Switch) UnmarshalYAML(n *yaml.Node) error {
	v, err := notify.ParseSwitch(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return fmt.Errorf("line %d: %q: want auto, on or off", n.Line, n.Value)
	}
	*s = Switch(v)
	return nil
}

// Protocol reads a desktop notification protocol.
type Protocol string

// UnmarshalYAML checks the value and names the line.
func (p *Protocol) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want one of auto, osc9, osc777, osc99, off", n.Line)
	}
	v, err := notify.ParseProtocol(strings.TrimSpace(n.Value))
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*p = Protocol(v)
	return nil
}

// SSHConfig names the ssh program (with any options of the user's) and the runwatch on remote hosts.
type SSHConfig struct {
	// Command is ssh and its options as words, e.g. [ssh, -F, ~/.ssh/fleet_config]; default [ssh].
	// RUNWATCH_SSH_COMMAND overrides it.
	Command []string `yaml:"command"`
	// Runwatch is the program run on remote hosts: "runwatch" (found on the remote PATH) by default. Every
	// login shell reads it, so it is made of safe characters only (remote.CheckProgram).
	Runwatch string `yaml:"runwatch"`
}

// Themes accepted by Theme.
var Themes = []string{"auto", "dark", "light", "mono"}

// Duration reads "30m", "2s" and plain seconds.
type Duration time.Duration

// UnmarshalYAML accepts Go duration strings.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration like 30m or 2s", n.Line)
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (want e.g. 30m, 2s)", n.Line, n.Value)
	}
	if v < 0 {
		return fmt.Errorf("line %d: duration %q is negative", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Default is the configuration when no file says otherwise.
func Default() Config {
	return Config{Theme: "auto", StaleAfter: Duration(30 * time.Minute)}
}

// DefaultPath is $XDG_CONFIG_HOME/runwatch/config.yaml, falling back to ~/.config, in the environment getenv
// reads.
func DefaultPath(getenv func(string) string) string { return defaultPath(getenv, homeIn(getenv)) }

// homeIn is the home folder of the environment getenv reads.
func homeIn(getenv func(string) string) func() (string, error) {
	return func() (string, error) { return userdir.Home(getenv) }
}

// defaultPath is DefaultPath with the environment and the home directory given, so tests run in parallel.
func defaultPath(getenv func(string) string, userHome func() (string, error)) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := userHome()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "runwatch", "config.yaml")
}

// maxConfigBytes keeps a mistaken path (a log, a binary) from being read whole.
const maxConfigBytes = 1 << 20

// Load reads path; an empty path means DefaultPath, which may be absent. An explicitly named file must exist.
// Errors name the file and the line. A root ~ or ~/x is under the user's home directory. getenv is the
// environment the default path and the home folder are read from.
func Load(path string, getenv func(string) string) (Config, error) {
	return load(path, func() string { return DefaultPath(getenv) }, homeIn(getenv))
}

// load is Load with the default path, and the home directory that ~ in roots stands for, given.
func load(path string, defaultPath func() string, home func() (string, error)) (Config, error) {
	cfg := Default()
	explicit := path != ""
	if !explicit {
		path = defaultPath()
		if path == "" {
			return cfg, nil
		}
	}
	// A FIFO or device in the config's place must not hang a command or a TAB completion: safefile opens
	// non-blocking and reads regular files only.
	data, fi, err := safefile.Read(path, maxConfigBytes)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return cfg, nil
		}
		if errors.Is(err, safefile.ErrTooLarge) {
			return cfg, fmt.Errorf("config %s: larger than %d bytes; is this the right file?", path, maxConfigBytes)
		}
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := trusted(path, fi); err != nil {
		return cfg, err
	}
	cfg.Path = path
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("config %s: %s", path, explainDecode(err, data))
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil {
		cfg.KeyLines = keyLines(&doc)
	}
	if err := cfg.validate(&doc); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.programsFound(&doc); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.checkDocument(&doc); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.placeRoots(&doc, home); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// placeRoots makes each local root of the file the folder it names wherever runwatch runs: ~ and ~/x under
// home, a relative root from the config's own folder (as ssh's Include reads one from ~/.ssh), made
// absolute. ~user is refused: runwatch does not look up other users' homes. A remote root is the host's to
// read, as written.
func (c *Config) placeRoots(doc *yaml.Node, home func() (string, error)) error {
	c.RootsLine = keyLine(doc, "roots")
	var items []*yaml.Node
	if n := valueOf(doc, "roots"); n != nil && n.Kind == yaml.SequenceNode {
		items = n.Content
		// A bare ~ is YAML's null, which the decoder leaves out of the list: here it is the home directory,
		// as in a shell. Any other null is an empty root.
		c.Roots = make([]string, len(items))
		for i, item := range items {
			if item.Tag != "!!null" {
				c.Roots[i] = item.Value
			} else if item.Value == "~" {
				c.Roots[i] = "~"
			}
		}
	}
	dir := ""
	for i, r := range c.Roots {
		line := c.RootsLine
		if i < len(items) {
			line = items[i].Line
		}
		if _, isRemote, err := remote.Parse(r); isRemote {
			if err != nil {
				return fmt.Errorf("line %d: roots: %v", line, err)
			}
			continue
		}
		switch {
		case r == "":
			return fmt.Errorf("line %d: roots: an empty root; name a folder", line)
		case r == "~" || strings.HasPrefix(r, "~/"):
			h, err := home()
			if err != nil || h == "" {
				return fmt.Errorf("line %d: roots: %q: no home directory to put ~ in (%v); write the full path", line, r, err)
			}
			c.Roots[i] = filepath.Join(h, strings.TrimPrefix(r[1:], "/"))
		case strings.HasPrefix(r, "~"):
			return fmt.Errorf("line %d: roots: %q: ~user is not expanded (only ~ and ~/ are); write the folder's full path", line, r)
		case !filepath.IsAbs(r):
			if dir == "" {
				abs, err := filepath.Abs(c.Path)
				if err != nil {
					return fmt.Errorf("line %d: roots: %q: %v", line, r, err)
				}
				dir = filepath.Dir(abs)
			}
			c.Roots[i] = filepath.Join(dir, r)
		}
	}
	return nil
}

// RootsError is err, about a root of the file that cannot be opened, said at the roots key's line.
func (c Config) RootsError(err error) error {
	return fmt.Errorf("config %s: line %d: roots: %w", c.Path, c.RootsLine, err)
}

// trusted refuses a config another user could have written, as ssh refuses such a ~/.ssh/config: the file
// names commands runwatch runs (ssh.command, notify.command, resume_command). It must be owned by the user
// (or root) and writable by nobody else, and so must every folder on its path, as given and with its links
// resolved (ssh's StrictModes): whoever can rename an entry of any of them can put another file in its
// place. A sticky folder (/tmp) is the exception: there only an entry's owner can rename it.
func trusted(path string, fi fs.FileInfo) error {
	me := os.Geteuid()
	owner := func(fi fs.FileInfo) int {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return int(st.Uid)
		}
		return me
	}
	fix := "runwatch runs the commands a config names, so it reads only a file that no one else can write"
	if uid := owner(fi); uid != me && uid != 0 {
		return fmt.Errorf("config %s: owned by uid %d, not by you (uid %d); %s (chown it, or pass --config with your own)",
			path, uid, me, fix)
	}
	if m := fi.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("config %s: mode %04o lets group or others write it; %s (chmod go-w %s)", path, m, fix, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, p := range []string{abs, resolved} {
		for dir := filepath.Dir(p); !seen[dir]; dir = filepath.Dir(dir) {
			seen[dir] = true
			if err := trustedFolder(path, dir, filepath.Dir(abs), owner, me, fix); err != nil {
				return err
			}
		}
	}
	return nil
}

// trustedFolder checks one folder on a config's path (see trusted).
func trustedFolder(path, dir, own string, owner func(fs.FileInfo) int, me int, fix string) error {
	which := "its folder " + dir
	if dir != own {
		which = "the folder " + dir + " on its path"
	}
	di, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("config %s: %s: %w", path, which, err)
	}
	if di.Mode()&os.ModeSticky != 0 {
		return nil
	}
	if uid := owner(di); uid != me && uid != 0 {
		return fmt.Errorf("config %s: %s is owned by uid %d, not by you (uid %d), who could replace the file; %s",
			path, which, uid, me, fix)
	}
	if m := di.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("config %s: %s has mode %04o, so group or others could replace the file; %s (chmod go-w %s)",
			path, which, m, fix, dir)
	}
	return nil
}

// programsFound refuses a command whose program is a relative path (./hook.sh, bin/x): it would be looked up
// from whatever folder runwatch, or the resume command's run folder, happens to be in. A bare name is found
// on PATH, an absolute path is itself; a program that is a template ({{.Dir}}/x) is the user's choice.
func (c *Config) programsFound(doc *yaml.Node) error {
	check := func(key, prog string) error {
		if prog == "" || strings.Contains(prog, "{{") || !strings.Contains(prog, "/") || filepath.IsAbs(prog) {
			return nil
		}
		where := ""
		if line := lineOf(doc, strings.Split(key, ".")...); line > 0 {
			where = fmt.Sprintf("line %d: ", line)
		}
		return fmt.Errorf("%s%s: the program %q is a relative path, which would be found from the folder runwatch "+
			"(or the command) runs in; write it as an absolute path, or a name found on PATH", where, key, prog)
	}
	if c.Notify.Command != "" {
		prog, _ := launch.Program(c.Notify.Command)
		if err := check("notify.command", prog); err != nil {
			return err
		}
	}
	for _, kind := range []string{"jonggrang", "resumable"} {
		if t := c.ResumeCommand[kind]; t != "" {
			prog, _ := launch.Program(strings.TrimSpace(t))
			if err := check("resume_command."+kind, prog); err != nil {
				return err
			}
		}
	}
	if err := remote.CheckProgram(c.SSH.Runwatch); err != nil {
		where := ""
		if line := lineOf(doc, "ssh", "runwatch"); line > 0 {
			where = fmt.Sprintf("line %d: ", line)
		}
		return fmt.Errorf("%sssh.runwatch: %v", where, err)
	}
	if len(c.SSH.Command) > 0 {
		return check("ssh.command", c.SSH.Command[0])
	}
	return nil
}

// lineOf is the line of the value at a path of mapping keys in doc, or 0.
func lineOf(doc *yaml.Node, keys ...string) int {
	if n := valueOf(doc, keys...); n != nil {
		return n.Line
	}
	return 0
}

// keyLine is the line of the last key of a path of mapping keys in doc, or 0: where `roots:` is written,
// whether its list follows on the same line or below.
func keyLine(doc *yaml.Node, keys ...string) int {
	if k, _ := lookup(doc, keys...); k != nil {
		return k.Line
	}
	return 0
}

// valueOf is the value at a path of mapping keys in doc, or nil.
func valueOf(doc *yaml.Node, keys ...string) *yaml.Node {
	_, v := lookup(doc, keys...)
	return v
}

// lookup is the key and value nodes at a path of mapping keys in doc, or nils.
func lookup(doc *yaml.Node, keys ...string) (key, value *yaml.Node) {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return nil, nil
		}
		key = nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				key, value = n.Content[i], n.Content[i+1]
			}
		}
		if key == nil {
			return nil, nil
		}
		n = value
	}
	return key, n
}

// keyLines is the line of each action under keys:, for errors about a binding.
func keyLines(doc *yaml.Node) map[string]int {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	out := map[string]int{}
	if n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "keys" && n.Content[i+1].Kind == yaml.MappingNode {
			m := n.Content[i+1]
			for j := 0; j+1 < len(m.Content); j += 2 {
				out[m.Content[j].Value] = m.Content[j].Line
			}
		}
	}
	return out
}

func (c *Config) validate(doc *yaml.Node) error {
	okTheme := false
	for _, t := range Themes {
		if c.Theme == t {
			okTheme = true
		}
	}
	if !okTheme {
		msg := fmt.Sprintf("%stheme %q: want one of %s", lineAt(doc, "theme"), c.Theme, strings.Join(Themes, ", "))
		if near := suggest.Nearest(c.Theme, Themes); len(near) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", near[0])
		}
		return errors.New(msg)
	}
	for kind := range c.ResumeCommand {
		if kind != "jonggrang" && kind != "resumable" {
			return fmt.Errorf("%sresume_command: unknown convention %q (want jonggrang or resumable)", lineAt(doc, "resume_command", kind), kind)
		}
	}
	if c.Notify.Command != "" {
		if err := notify.CheckHook(c.Notify.Command); err != nil {
			return fmt.Errorf("%s%w", lineAt(doc, "notify", "command"), err)
		}
	}
	if err := watch.CheckPoll(c.Poll.D()); err != nil {
		return fmt.Errorf("%s%w", lineAt(doc, "poll"), err)
	}
	if c.MaxDepth < 0 {
		return fmt.Errorf("%smax_depth %d is negative", lineAt(doc, "max_depth"), c.MaxDepth)
	}
	return nil
}

// StageOrderRule is one entry of stage_order.
type StageOrderRule struct {
	Pattern string
	Stages  []string
}

// StageOrders is stage_order, in the order the file lists it.
type StageOrders []StageOrderRule

// UnmarshalYAML reads a mapping of glob → list of stage ids; a bad glob, an empty list or a stage named twice
// is an error with its line, since an order that is wrong would be written into state.env by step.
func (o *StageOrders) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: stage_order: want a mapping of task-name glob to a list of stages, e.g. "+
			`{"iso26262-mining-*": [ingest, extract, normalize]}`, n.Line)
	}
	var out StageOrders
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
			return fmt.Errorf("line %d: stage_order: a key must be a task-name glob", k.Line)
		}
		if _, err := path.Match(k.Value, ""); err != nil {
			return fmt.Errorf("line %d: stage_order: %q is not a valid glob: %v", k.Line, k.Value, err)
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("line %d: stage_order %q: want a non-empty list of stage ids", v.Line, k.Value)
		}
		rule := StageOrderRule{Pattern: k.Value}
		seen := map[string]bool{}
		for _, item := range v.Content {
			id := strings.TrimSpace(item.Value)
			if item.Kind != yaml.ScalarNode || id == "" {
				return fmt.Errorf("line %d: stage_order %q: every entry must be a stage id", item.Line, k.Value)
			}
			if seen[strings.ToUpper(id)] {
				return fmt.Errorf("line %d: stage_order %q: stage %q is listed twice", item.Line, k.Value, id)
			}
			seen[strings.ToUpper(id)] = true
			rule.Stages = append(rule.Stages, id)
		}
		for _, prev := range out {
			if prev.Pattern == rule.Pattern {
				return fmt.Errorf("line %d: stage_order: %q is given twice", k.Line, k.Value)
			}
		}
		out = append(out, rule)
	}
	*o = out
	return nil
}
