package sim

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The expected text is what js-yaml 4 dump(x, {lineWidth: -1}) prints for the same object (docs/FORMATS.md A.2):
// integer-like keys first and single-quoted, '6.5' after '17', timestamps single-quoted, lists indented under
// their key, empty collections inline, a map inside a list starting on the dash line.
func TestDumpYAMLMatchesJSYAMLStyle(t *testing.T) {
	doc := yMap{
		{"feature_id", "add-login-form-mlop4860"},
		{"created_at", "2026-02-16T04:50:15.123Z"},
		{"current_phase", 6.5},
		{"active_phases", yList{1.0, 6.5, 17.0}},
		{"phases", yMap{
			{"1", yMap{{"name", "setup"}, {"output", nil}}},
			{"6.5", yMap{{"name", "design-system"}, {"output_files", yList{}}}},
			{"17", yMap{{"name", "completion"}, {"output_files", yList{
				yMap{{"path", "src/auth.ts"}, {"type", "code"}, {"size", int64(2311)}},
			}}}},
		}},
		{"agents", yMap{}},
		{"context_usage", 0.42},
		{"has_ui", true},
	}
	got, err := dumpYAML(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `feature_id: add-login-form-mlop4860
created_at: '2026-02-16T04:50:15.123Z'
current_phase: 6.5
active_phases:
  - 1
  - 6.5
  - 17
phases:
  '1':
    name: setup
    output: null
  '17':
    name: completion
    output_files:
      - path: src/auth.ts
        type: code
        size: 2311
  '6.5':
    name: design-system
    output_files: []
agents: {}
context_usage: 0.42
has_ui: true
`
	if string(got) != want {
		t.Fatalf("dump differs from js-yaml style\n--- got\n%s--- want\n%s", got, want)
	}
	// And it reads back: timestamps stay strings because they are quoted.
	var back map[string]any
	if err := yaml.Unmarshal(got, &back); err != nil {
		t.Fatalf("dump does not parse: %v", err)
	}
	if s, ok := back["created_at"].(string); !ok || s != "2026-02-16T04:50:15.123Z" {
		t.Fatalf("created_at read back as %T %v, want the string", back["created_at"], back["created_at"])
	}
}

// The expected column was produced by js-yaml 4.3.2's dump({v: s}, {lineWidth: -1}) itself; the emitter also
// matched js-yaml byte for byte on 30,000 random strings of YAML-significant characters (as value, key, list
// item and nested value) and on every manifest the demo and GenerateRuns write, checked once with node.
func TestScalarQuotingFollowsJSYAML(t *testing.T) {
	cases := map[string]string{
		"setup":                                "setup",
		"Awaiting human input (brainstorming)": "Awaiting human input (brainstorming)",
		"/abs/path/MANIFEST.yaml":              "/abs/path/MANIFEST.yaml",
		"":                                     "''",
		"8":                                    "'8'",
		"6.5":                                  "'6.5'",
		"0x1F":                                 "'0x1F'",
		"1_000":                                "1_000", // js-yaml 4 reads no underscores in numbers
		".inf":                                 "'.inf'",
		"null":                                 "'null'",
		"~":                                    "'~'",
		"True":                                 "'True'",
		"yes":                                  "'yes'",
		"off":                                  "'off'",
		"2026-02-16":                           "'2026-02-16'",
		"2026-02-16 04:50:15":                  "'2026-02-16 04:50:15'",
		"12:30":                                "'12:30'",
		"a: b":                                 "'a: b'",
		"a #b":                                 "'a #b'",
		"a#b":                                  "a#b",
		"a:b":                                  "a:b",
		"- item":                               "'- item'",
		"#x":                                   "'#x'",
		"it's":                                 "it's",
		"'quoted'":                             "'''quoted'''",
		" lead":                                "' lead'",
		"trail ":                               "'trail '",
		"ends:":                                "'ends:'",
		"line\nbreak":                          "|-\n  line\n  break",
		"two\n":                                "|\n  two",
		"keep\n\n":                             "|+\n  keep\n",
		" lead\nx":                             "|2-\n   lead\n  x",
		"tab\there":                            `"tab\there"`,
		"bell\a":                               `"bell\a"`,
		"nbsp\u00a0":                           `"nbsp\_"`,
		"0b":                                   "0b",
		"0123":                                 "'0123'",
		"+5":                                   "'+5'",
		"1e5":                                  "'1e5'",
		"1.":                                   "'1.'",
		"<<":                                   "'<<'",
	}
	for in, want := range cases {
		if got := yamlString(in, 2, false); got != want {
			t.Errorf("yamlScalarString(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := yaml.Unmarshal([]byte("v: "+yamlString(in, 2, false)+"\n"), &struct {
			V *string `yaml:"v"`
		}{&back}); err != nil {
			t.Errorf("%q: written as %s does not parse: %v", in, yamlString(in, 2, false), err)
		} else if back != in {
			t.Errorf("%q: reads back as %q", in, back)
		}
	}
}

func TestJSKeyOrderPutsArrayIndexKeysFirst(t *testing.T) {
	m := yMap{{"6.5", 0}, {"b", 0}, {"17", 0}, {"01", 0}, {"2", 0}, {"4294967295", 0}, {"11.5", 0}}
	var keys []string
	for _, kv := range jsKeyOrder(m) {
		keys = append(keys, kv.Key)
	}
	// "01" and 2^32-1 are not array indices in JavaScript, so they keep insertion order.
	if got, want := strings.Join(keys, " "), "2 17 6.5 b 01 4294967295 11.5"; got != want {
		t.Fatalf("key order %q, want %q", got, want)
	}
}

func TestJSONStringifyStyle(t *testing.T) {
	got, err := jsonStringify(agentLock{AgentID: "developer-auth-001", Files: []string{"src/a<b>.ts"}, AcquiredAt: "2026-02-16T05:02:01.000Z", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"agent_id\": \"developer-auth-001\",\n  \"files\": [\n    \"src/a<b>.ts\"\n  ],\n  \"acquired_at\": \"2026-02-16T05:02:01.000Z\",\n  \"pid\": 42\n}"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// The expected line is what Python 3's json.dumps(obj, sort_keys=True) printed for the same object.
func TestPythonJSONLine(t *testing.T) {
	got, err := pythonJSONLine(map[string]any{"user": "jé\u2028😀\x7f", "pid": 7, "host": `h"x\`, "a": "\x01\t"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a": "\u0001\t", "host": "h\"x\\", "pid": 7, "user": "j\u00e9\u2028\ud83d\ude00\u007f"}` + "\n"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := pythonJSONLine(map[string]any{"x": 1.5}); err == nil {
		t.Fatal("a float field was accepted; the lock writer only has strings and ints")
	}
}

func TestJSNumber(t *testing.T) {
	for in, want := range map[float64]string{1: "1", 6.5: "6.5", 0.42: "0.42", 17: "17", 1e21: "1e+21", 1.5e-7: "1.5e-7", 1e-7: "1.e-7", 0.000001: "0.000001"} {
		if got := jsNumber(in); got != want {
			t.Errorf("jsNumber(%v) = %s, want %s", in, got, want)
		}
	}
}

// Whatever string a manifest holds (descriptions and error texts are free text), the dump must read back as
// that same string. (Whether it reads as a string into an untyped value is js-yaml's schema question, which
// TestScalarQuotingFollowsJSYAML covers; yaml.v3 is laxer about dates such as 0000-01-1, which js-yaml writes
// plain.)
func FuzzYAMLScalarRoundTrip(f *testing.F) {
	for _, s := range []string{"setup", "", "8", "6.5", "yes", "a: b", "#x", "it's", "line\nbreak", "2026-02-16T04:50:15.123Z", " x", "\t", "é", "- a", "[x]", "{a: 1}", "*ref", "&a", "!tag", "%x", "@x", "`x", "null", "~", "0o17", "+1", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("the writers only hold valid UTF-8 (JavaScript strings)")
		}
		doc, err := dumpYAML(yMap{{"v", s}, {"list", yList{s}}})
		if err != nil {
			t.Fatal(err)
		}
		var typed struct {
			V    string   `yaml:"v"`
			List []string `yaml:"list"`
		}
		if err := yaml.Unmarshal(doc, &typed); err != nil {
			t.Fatalf("%q dumps to unparsable YAML: %v\n%s", s, err, doc)
		}
		if typed.V != s || len(typed.List) != 1 || typed.List[0] != s {
			t.Fatalf("%q reads back as %q / %q\n%s", s, typed.V, typed.List, doc)
		}
	})
}
