package config

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"runwatch/state/launch"
	"runwatch/suggest"
	"runwatch/ui/keys"
)

// Overrides are the command-line flags that stand over the config; a zero field leaves the config's value.
type Overrides struct {
	StaleAfter, OrphanAfter, QuietAfter, Poll time.Duration
	MaxDepth                                  int
	ReadOnly                                  bool // --read-only: on if either says so
}

// Apply puts the flags over the config: flags > config file > defaults, the one place that rule is written.
func (c *Config) Apply(o Overrides) {
	if o.StaleAfter > 0 {
		c.StaleAfter = Duration(o.StaleAfter)
	}
	if o.OrphanAfter > 0 {
		c.OrphanAfter = Duration(o.OrphanAfter)
	}
	if o.QuietAfter > 0 {
		c.QuietAfter = Duration(o.QuietAfter)
	}
	if o.Poll > 0 {
		c.Poll = Duration(o.Poll)
	}
	if o.MaxDepth > 0 {
		c.MaxDepth = o.MaxDepth
	}
	c.ReadOnly = c.ReadOnly || o.ReadOnly
}

// checkDocument is what Load checks once the file is decoded, so every command refuses the same config
// the same way before it does anything: key bindings as the dashboard would build them (read-only or not,
// a config that is wrong stays wrong), and resume_command rendered over a sample run, so a misspelt field
// fails now and not when X is pressed.
func (c *Config) checkDocument(doc *yaml.Node) error {
	if _, err := keys.NewKeyMapAt(c.Keys, c.KeyLines, false); err != nil {
		return err
	}
	kinds := make([]string, 0, len(c.ResumeCommand))
	for kind := range c.ResumeCommand {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		if err := launch.Check("resume_command."+kind, c.ResumeCommand[kind]); err != nil {
			return fmt.Errorf("%s%w", lineAt(doc, "resume_command", kind), err)
		}
	}
	return nil
}

func lineAt(doc *yaml.Node, keys ...string) string {
	if line := lineOf(doc, keys...); line > 0 {
		return fmt.Sprintf("line %d: ", line)
	}
	return ""
}

// unknownField is how yaml.v3 reports a key that no field takes (KnownFields).
var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type config\.(\w+)`)

// explainDecode rewrites a decode error for a person: an unknown key is named with the section it is in,
// the key meant when one is close, and the keys that section takes.
func explainDecode(err error, data []byte) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	// yaml.v3 lists type errors under a heading, one indented line each: one error reads as one line.
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n  "); ok && !strings.Contains(rest, "\n") {
		msg = rest
	}
	msg = wrongType.ReplaceAllStringFunc(msg, func(m string) string {
		sub := wrongType.FindStringSubmatch(m)
		line, found, want := sub[1], sub[2], sub[3]
		what := map[string]string{"[]string": "a list, such as [a, b]", "int": "a whole number", "bool": "true or false",
			"string": "a word or quoted text", "map[string][]string": "a mapping of names to lists"}[want]
		if what == "" {
			what = want
		}
		key := ""
		if n, err := strconv.Atoi(line); err == nil {
			if k := keyAtLine(data, n); k != "" {
				key = k + ": "
			}
		}
		return fmt.Sprintf("line %s: %swant %s, found %s", line, key, what, found)
	})
	return unknownField.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unknownField.FindStringSubmatch(m)
		line, key, typ := sub[1], sub[2], sub[3]
		known := yamlKeys(typ)
		section := sectionOf[typ]
		where := "unknown key " + strconv.Quote(key)
		if section != "" {
			where += " under " + section + ":"
		}
		hint := ""
		if near := suggest.Nearest(key, known); len(near) > 0 {
			hint = fmt.Sprintf(" (did you mean %q?)", strings.Join(near, `" or "`))
		}
		return fmt.Sprintf("line %s: %s%s; the keys there are %s", line, where, hint, strings.Join(known, ", "))
	})
}

// wrongType is how yaml.v3 reports a value of the wrong kind: `cannot unmarshal !!str `four` into int`.
var wrongType = regexp.MustCompile("line (\\d+): cannot unmarshal !!\\w+ (`[^`]*`|[^ ]+) into (\\S+)")

// keyAtLine is the mapping key written on line n of the document, or "".
func keyAtLine(data []byte, n int) string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return ""
	}
	var find func(*yaml.Node) string
	find = func(node *yaml.Node) string {
		if node.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(node.Content); i += 2 {
				if node.Content[i].Line == n {
					return node.Content[i].Value
				}
			}
		}
		for _, c := range node.Content {
			if k := find(c); k != "" {
				return k
			}
		}
		return ""
	}
	return find(&doc)
}

// sectionOf names the config section each struct is read from.
var sectionOf = map[string]string{"Notify": "notify", "SSHConfig": "ssh"}

var sectionTypes = map[string]reflect.Type{
	"Config": reflect.TypeFor[Config](), "Notify": reflect.TypeFor[Notify](), "SSHConfig": reflect.TypeFor[SSHConfig](),
}

// yamlKeys lists the keys a section takes, from its struct's yaml tags, so the list cannot fall behind.
func yamlKeys(typ string) []string {
	t, ok := sectionTypes[typ]
	if !ok {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
