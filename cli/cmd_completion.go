package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"runwatch/config"
	"runwatch/model"
	"runwatch/remote"
	"runwatch/state"
	"runwatch/state/action"
	"runwatch/status"
	"runwatch/suggest"
)

// What a command's positional arguments are, for completion (command.completeArgs).
const (
	argPaths    = ":paths"    // files and folders, completed by the shell
	argRuns     = ":runs"     // run ids found under the default roots, then nothing more
	argCommands = ":commands" // runwatch's command names
	// argRunPart is the argument after RUN that names a part of that run (an item, a phase, a lock): read
	// from the run itself, by runParts.
	argRunPart = ":run-part"
)

// completeFiles, as the last line of __complete's answer, asks the shell script to add its own file and
// folder completion (which knows about ~, quoting and trailing slashes).
const completeFiles = ":files"

func init() {
	register(command{
		name:    "completion",
		summary: "print the shell completion script for bash, zsh or fish",
		args:    "SHELL",
		about: "The script completes commands, flags, flag values, run ids (from the names of the run folders " +
			"under the configured or default roots, remote ones left out: no run is read) and what follows RUN, " +
			"read from that one run (named by its folder, or the start of its name): open checklist items for " +
			"check, ticked ones for uncheck, failed phases for retry, locks for unlock. It asks runwatch itself, " +
			"so it stays right as runwatch changes.",
		examples: []example{
			{"bash, for this shell", "source <(runwatch completion bash)"},
			{"zsh, for every new shell (after compinit in ~/.zshrc)", "echo 'source <(runwatch completion zsh)' >> ~/.zshrc"},
			{"fish", "runwatch completion fish > ~/.config/fish/completions/runwatch.fish"},
		},
		completeArgs: []string{"bash", "zsh", "fish"},
		define:       func(*flagSet) runFunc { return runCompletion },
	})
	register(command{
		name:    "__complete",
		summary: "answer the completion scripts: the candidates for the last word of ARGS",
		args:    "ARGS...",
		hidden:  true,
		rawArgs: true,
		define: func(fs *flagSet) runFunc {
			return func(args []string, stdout, stderr io.Writer) int {
				return runComplete(fs.env.getenv, args, stdout, stderr)
			}
		},
	})
	register(command{
		name:    "__complete0",
		summary: "answer the zsh and fish completion scripts: NUL-terminated candidates for the last word of ARGS",
		args:    "ARGS...",
		hidden:  true,
		rawArgs: true,
		define: func(fs *flagSet) runFunc {
			return func(args []string, stdout, stderr io.Writer) int {
				return runComplete0(fs.env.getenv, args, stdout, stderr)
			}
		},
	})
}

func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return usageError(stderr, "completion", "name one SHELL: bash, zsh or fish")
	}
	script, ok := completionScripts[args[0]]
	if !ok {
		msg := fmt.Sprintf("no completion for %q; there is bash, zsh and fish", args[0])
		if near := suggest.Nearest(args[0], []string{"bash", "zsh", "fish"}); len(near) > 0 {
			msg += "; did you mean " + orList(near) + "?"
		}
		return usageError(stderr, "completion", "%s", msg)
	}
	io.WriteString(stdout, script)
	return exitOK
}

// runComplete prints one candidate a line ("word" or "word<TAB>description") for the last of args, given the
// words before it, and completeFiles when file names fit there too. It is what scripts printed by earlier
// versions ask (fish's is saved to a file), and a line cannot carry a newline: a run folder named
// "h8 a\nh0-victim" would be offered as two candidates, the second another run's id. So a candidate with a
// newline is left out here; the scripts printed now ask __complete0, which carries it whole.
func runComplete(getenv func(string) string, args []string, stdout, stderr io.Writer) int {
	for _, c := range completionsFor(getenv, args) {
		if !strings.Contains(c, "\n") && !heldTabs(c) {
			fmt.Fprintln(stdout, c)
		}
	}
	return exitOK
}

// completeTabsEnv=1 is set by the zsh script printed now: it reads a candidate's description from the last
// TAB, so a word holding a TAB can be offered whole (see dataWord).
const completeTabsEnv = "RUNWATCH_COMPLETE_TABS"

// runComplete0 is runComplete with every candidate ended by a NUL, a newline in it kept.
func runComplete0(getenv func(string) string, args []string, stdout, stderr io.Writer) int {
	var b strings.Builder
	tabs := getenv(completeTabsEnv) == "1"
	for _, c := range completionsFor(getenv, args) {
		if heldTabs(c) && !tabs {
			continue
		}
		b.WriteString(c)
		b.WriteByte(0)
	}
	io.WriteString(stdout, b.String())
	return exitOK
}

// completionsFor is what may stand at the last of args, given the words before it, in the environment
// getenv reads (the config, the default roots, the walk cache).
func completionsFor(getenv func(string) string, args []string) []string {
	if len(args) == 0 {
		args = []string{""}
	}
	return completions(getenv, args[:len(args)-1], args[len(args)-1])
}

// completions works out what may stand at cur, after the words before it.
func completions(getenv func(string) string, before []string, cur string) []string {
	c := commands[defaultCommand]
	fs := newFlagSet(c.name)
	c.define(fs)
	haveCommand := false
	var positional []string
	src := typedConfig{getenv: getenv}
	for i := 0; i < len(before); i++ {
		w := before[i]
		if w == "--" {
			positional = append(positional, before[i+1:]...)
			break
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if name == "read-only" {
				on, err := strconv.ParseBool(value)
				src.readOnly = src.readOnly || !hasValue || err != nil || on
			}
			if fl := fs.Lookup(name); fl != nil && !isBoolFlag(fl) && !hasValue && i+1 < len(before) {
				i++
				if name == "config" {
					src.path = before[i]
				}
			}
			continue
		}
		if !haveCommand && len(positional) == 0 {
			if cmd, ok := commands[w]; ok && !cmd.hidden {
				c, haveCommand = cmd, true
				fs = newFlagSet(c.name)
				c.define(fs)
				continue
			}
		}
		positional = append(positional, w)
	}

	// A flag's value.
	if len(before) > 0 {
		prev := before[len(before)-1]
		if strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
			if fl := fs.Lookup(strings.TrimLeft(prev, "-")); fl != nil && !isBoolFlag(fl) {
				return filterPrefix(flagValues(fs.longName(fl.Name), src, cur), cur)
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		if name, value, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			var out []string
			for _, v := range flagValues(name, src, value) {
				if v != completeFiles {
					out = append(out, "--"+name+"="+v)
				}
			}
			return filterPrefix(out, "--"+name+"="+value)
		}
		var out []string
		for _, name := range fs.names() {
			_, usage := flag.UnquoteUsage(fs.Lookup(name))
			out = append(out, "--"+name+"\t"+usage)
		}
		// Every command takes --help; before any command, --version is runwatch's too (dispatch).
		out = append(out, "--help\tshow the help and examples")
		if !haveCommand && len(positional) == 0 {
			out = append(out, "--version\tprint the version")
		}
		return filterPrefix(out, cur)
	}
	if !haveCommand && len(positional) == 0 {
		var out []string
		for _, name := range commandNames(false) {
			out = append(out, name+"\t"+commands[name].summary)
		}
		return append(filterPrefix(out, cur), completeFiles)
	}
	var out []string
	for _, kind := range c.completeArgs {
		if kind == argRunPart {
			// What follows RUN is a part of that run the verb acts on (state/action's Verb.Words).
			if v := action.Verb(c.name); v.Known() && len(positional) == 1 {
				if r, ok := loadRunQuietly(positional[0], src); ok {
					for _, w := range v.Words(r) {
						out = append(out, dataWord(w))
					}
				}
			}
			continue
		}
		switch kind {
		case argPaths:
			out = append(out, completeFiles)
		case argRuns:
			if len(positional) == 0 {
				out = append(out, knownRunIDs(src, cur)...)
				if strings.ContainsAny(cur, "/.~") {
					out = append(out, completeFiles)
				}
			}
		case argCommands:
			if len(positional) == 0 {
				out = append(out, commandNames(false)...)
			}
		default:
			if len(positional) == 0 {
				out = append(out, kind)
			}
		}
	}
	return filterPrefix(out, cur)
}

// typedConfig is what the words typed before the one being completed say about the configuration: the
// --config named, and whether --read-only is among them (then the completion writes nothing either, not
// even the walk cache).
type typedConfig struct {
	path     string
	readOnly bool
	getenv   func(string) string // the environment the completion runs in
}

// flagValues are the values a flag takes, where they can be listed (those that start with typed, where
// listing all would cost); other flags' values are typed freely.
func flagValues(name string, src typedConfig, typed string) []string {
	switch name {
	case "output":
		return status.Formats
	case "sort":
		return status.Sorts
	case "until":
		return strings.Split(statusList(), ", ")
	case "run":
		return knownRunIDs(src, typed)
	case "config", "debug", "dir":
		return []string{completeFiles}
	}
	return nil
}

// knownRunIDs are the ids of the runs under the configured roots (or the defaults) that start with prefix,
// from folder names alone: a completion must answer at once, and in a tree of 100,000 runs listing every run
// folder took seconds (state.DiscoverNamedCached reads no run, lists only the folders the prefix may name,
// and its walk cache spares even those listings while the folders are unchanged).
func knownRunIDs(src typedConfig, prefix string) []string {
	locs, ok := runsNamed(src, func(id string) bool { return strings.HasPrefix(id, prefix) })
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, l := range locs {
		if id := state.LocationID(l); strings.HasPrefix(id, prefix) && !seen[id] {
			seen[id] = true
			ids = append(ids, dataWord(id))
		}
	}
	sort.Strings(ids)
	return ids
}

// runsNamed finds, under the local roots, the runs whose folder names named accepts (and some others, which
// the caller filters by id). A remote root would cost a connection: not for a keystroke. The walk is
// answered from the walk cache where the folders' stats show it holds (state.DiscoverNamedCached): the
// candidates of a keystroke, never what a command acts on, which finds and reads its run itself.
func runsNamed(src typedConfig, named func(folder string) bool) ([]state.Location, bool) {
	cfg, err := config.Load(src.path, src.getenv)
	if err != nil {
		return nil, false
	}
	local, _, err := remote.Split(scanPaths(src.getenv, nil, cfg))
	if err != nil {
		return nil, false
	}
	locs, _ := state.DiscoverNamedCached(local, cfg.MaxDepth, named, state.WalkCache{Dir: state.DefaultWalkCacheDir(src.getenv), ReadOnly: cfg.ReadOnly || src.readOnly})
	return locs, true
}

// loadRunQuietly reads the one run arg names, for completing what follows it; any doubt gives no candidates.
// A path is resolved as the commands resolve it; an id only by folder names, exactly or as the start of one
// (state.MatchRun, without its look into every state.env for a RUN_ID that is no folder's name: that read
// every run for a keystroke), and only that run is read.
func loadRunQuietly(arg string, src typedConfig) (model.Run, bool) {
	cfg, err := config.Load(src.path, src.getenv)
	if err != nil {
		return model.Run{}, false
	}
	var loc state.Location
	if _, err := os.Stat(arg); err == nil {
		if loc, err = resolveRun(src.getenv, arg, cfg); err != nil {
			return model.Run{}, false
		}
	} else {
		locs, ok := runsNamed(src, func(id string) bool { return strings.HasPrefix(id, arg) })
		if !ok {
			return model.Run{}, false
		}
		named := state.MatchRun(locs, arg, "", func(l state.Location) state.RunName { return state.RunName{ID: state.LocationID(l)} })
		if loc, err = state.PickRun(arg, named, nil); err != nil {
			return model.Run{}, false
		}
	}
	return state.Load(loc, envFor(cfg)), true
}

func isBoolFlag(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// A candidate is "word" or "word<TAB>description", and a name from a run's files (a folder, an item, a
// phase, a lock) may hold a TAB itself: such a word always carries a description, maybe empty, and the
// description is what follows the last TAB. Read at the first TAB, "h0-victim<TAB>tail" would be offered as
// "h0-victim", another run's id.
func dataWord(w string) string {
	if strings.Contains(w, "\t") {
		return w + "\t"
	}
	return w
}

// candidateWord is the word of a candidate, without its description.
func candidateWord(c string) string {
	if i := strings.LastIndexByte(c, '\t'); i >= 0 {
		return c[:i]
	}
	return c
}

// heldTabs says whether a candidate's word holds a TAB. Only the bash and zsh scripts printed now read the
// description from the last TAB; fish cannot put a TAB in a candidate at all and splits at the first, as
// scripts printed by earlier versions do: for them such a candidate is left out, never offered cut short.
func heldTabs(c string) bool { return strings.Contains(candidateWord(c), "\t") }

// filterPrefix keeps the candidates that start with prefix (the part before a tab), and completeFiles.
func filterPrefix(cands []string, prefix string) []string {
	var out []string
	for _, c := range cands {
		word := candidateWord(c)
		if c == completeFiles || strings.HasPrefix(word, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// The scripts only ask `runwatch __complete` and hand its answer to the shell, so all the knowledge of
// commands and flags stays in one place (the commands' own definitions).
var completionScripts = map[string]string{
	"bash": `# bash completion for runwatch: source <(runwatch completion bash)
# bash inserts what a completion answers as it is, so every candidate is quoted here (printf %q), or by
# readline itself when the answer holds file names (-o filenames quotes every match).
_runwatch() {
    local rec word cur= files=0
    local -a cands=()
    COMPREPLY=()
    while IFS= read -r -d '' rec; do
        if [[ $rec == :files$'\t'* ]]; then
            files=1 cur=${rec#:files$'\t'}
        else
            cands+=("${rec%$'\t'*}")
        fi
    done < <(runwatch __complete-bash "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
    if (( files )); then
        compopt -o filenames 2>/dev/null
        COMPREPLY=("${cands[@]}")
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
    else
        for word in "${cands[@]}"; do
            printf -v word '%q' "$word"
            COMPREPLY+=("$word")
        done
    fi
    return 0
}
complete -F _runwatch runwatch
`,
	"zsh": `#compdef runwatch
# zsh completion for runwatch: source <(runwatch completion zsh), after compinit
_runwatch() {
    local line files=0
    local -a cands
    # the words as typed, one level of quoting removed ((Q) unquotes, it does not expand); the candidates
    # come NUL-terminated ((0) splits there), so a newline in a name stays inside its candidate
    # the description follows a candidate's last tab (a name may hold one), hence %, not %%
    for line in "${(@0)$(RUNWATCH_COMPLETE_TABS=1 runwatch __complete0 "${(@Q)words[2,CURRENT]}" 2>/dev/null)}"; do
        [[ -z $line ]] && continue
        if [[ $line == :files ]]; then
            files=1
        else
            cands+=("${line%$'\t'*}")
        fi
    done
    (( ${#cands} )) && compadd -- "${cands[@]}"
    (( files )) && _files
    return 0
}
compdef _runwatch runwatch
`,
	"fish": `# fish completion for runwatch: runwatch completion fish > ~/.config/fish/completions/runwatch.fish
function __runwatch_complete
    # -o unquotes the words before; the one being typed comes as typed, so unquote it too
    set -l words (commandline -opc)
    set -l cur (commandline -ct | string unescape)
    # the candidates come NUL-terminated and go out so: a function whose output ends in string split0 is
    # split at NULs, not lines, so a newline in a name stays inside its candidate
    for line in (runwatch __complete0 $words[2..-1] "$cur" 2>/dev/null | string split0)
        if test "$line" = ":files"
            printf '%s\0' (__fish_complete_path "$cur")
        else
            printf '%s\0' "$line"
        end
    end | string split0
end
complete -c runwatch -f -a '(__runwatch_complete)'
`,
}
