package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"runwatch/model"
)

// A dashboard over 8 hosts of 1,000 runs spent half its CPU while they loaded decoding their lines by
// reflection (json.Unmarshal of each run: 0.2–0.8 s a host; issue 35). Lines are decoded here field by
// field, as model's writers (model/runjson.go) write them; what a line holds one of or rarely (a run's
// locks, timing, details of a jonggrang run, a stage's output files and timing, a log's entries) goes
// through encoding/json, as the writers do. It takes the keys the writers write, skips others as
// encoding/json does, and refuses what is not JSON (TestWireDecodeAsUnmarshal holds it to json.Unmarshal
// over the writers' output; FuzzWireDecode to refusing what json.Valid refuses).

// decodeWire decodes one line of `runwatch events` into ev, taking its short strings from names (nil: none).
func decodeWire(line []byte, ev *wireEvent, names *wireNames) error {
	d := &wireDec{b: line, names: names}
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "protocol":
			return d.int(&ev.Protocol)
		case "compact":
			// Before the run, in the lines of a runwatch asked for them (CompactEnv): its run is in
			// model.Run.AppendWireJSON's form.
			return d.bool(&d.compact)
		case "type":
			return d.str(&ev.Type)
		case "at":
			return d.timeValue(&ev.At, nil)
		case "run":
			if d.null() {
				ev.Run = nil
				return nil
			}
			if ev.Run == nil {
				ev.Run = &model.Run{}
			}
			return d.run(ev.Run)
		case "state_path":
			return d.str(&ev.StatePath)
		case "path":
			return d.str(&ev.Path)
		case "entries":
			return d.raw(&ev.Entries)
		case "truncated":
			return d.bool(&ev.Truncated)
		case "rotated":
			return d.bool(&ev.Rotated)
		case "skipped":
			return d.int(&ev.Skipped)
		case "health":
			return d.raw(&ev.Health)
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.b) {
		return d.errorf("text after the line's object")
	}
	return nil
}

// wireDec reads JSON from b at i.
type wireDec struct {
	b     []byte
	i     int
	names *wireNames
	times []time.Time // where time takes the next one from
	// compact: the line said its run is in model.Run.AppendWireJSON's form.
	compact bool
	// dir is the run's folder, for its paths written without it; stages counts the run's stages read so far,
	// checkpointOf holds each one's "checkpoint_of" said: [stage, index].
	dir          string
	stages       int
	checkpointOf [][2]int
	// rare is where a stage's rarely set fields are read before model.Stage.SetRare copies them: a
	// variable of stage's own would escape with its closure, an allocation a stage.
	rare model.StageRare
}

// wireNames holds the short strings a host's lines have said, so that each is made once however many runs
// say it (a stage's status and name, a checklist's keys, state.env's keys and most of its values): they
// were a third of what decoding a host's first 1,000 runs allocated, made again for every run (issue 35).
// A host's stream has one; it stops taking new ones at maxWireNames.
type wireNames struct{ m map[string]string }

const (
	maxWireNames   = 4096
	maxWireNameLen = 40
)

func newWireNames() *wireNames { return &wireNames{m: map[string]string{}} }

// of is b as a string: the one already held, or a new one.
func (n *wireNames) of(b []byte) string {
	if n == nil || len(b) > maxWireNameLen {
		return string(b)
	}
	if s, ok := n.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(n.m) < maxWireNames {
		n.m[s] = s
	}
	return s
}

func (d *wireDec) errorf(format string, a ...any) error {
	return fmt.Errorf("at byte %d: %s", d.i, fmt.Sprintf(format, a...))
}

func (d *wireDec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (d *wireDec) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *wireDec) literal(word string) bool {
	if d.peek() == word[0] && len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

// null takes a null, if that is what comes.
func (d *wireDec) null() bool { return d.literal("null") }

// object reads an object, calling field for each key with d at its value; null is no object.
func (d *wireDec) object(field func(key []byte) error) error {
	if d.null() {
		return nil
	}
	if d.peek() != '{' {
		return d.errorf("want an object")
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.errorf("want a key")
		}
		raw, plain, err := d.quoted()
		if err != nil {
			return err
		}
		key := raw[1 : len(raw)-1]
		if !plain {
			// No key the writers write has an escape: one that has matches none, and is read past.
			key = nil
		}
		if d.peek() != ':' {
			return d.errorf("want ':' after key %s", raw)
		}
		d.i++
		if err := field(key); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.errorf("want ',' or '}' after the value of %s", raw)
		}
	}
}

// array reads an array, calling elem with d at each element; null leaves it to the caller (nullArray).
func (d *wireDec) array(elem func() error) error {
	if d.peek() != '[' {
		return d.errorf("want an array")
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return d.errorf("want ',' or ']' in an array")
		}
	}
}

// list reads a JSON array into *out as encoding/json does: null makes it nil, [] empty, each element by one.
func list[T any](d *wireDec, out *[]T, one func(*T) error) error {
	if d.null() {
		*out = nil
		return nil
	}
	s := (*out)[:0]
	if n := d.elems(); cap(s) < n || s == nil {
		// Made once at its length: grown by append, a host's first runs' lists were a sixth of what the
		// dashboard allocated while they loaded, and held up to twice the room they needed (issue 35).
		s = make([]T, 0, n)
	}
	var zero T
	err := d.array(func() error {
		s = append(s, zero)
		return one(&s[len(s)-1])
	})
	*out = s
	return err
}

// elems counts the elements of the array at d (a look ahead that moves nothing); 0 for what is not one, which
// array then refuses.
func (d *wireDec) elems() int {
	if d.peek() != '[' {
		return 0
	}
	depth, n, empty := 0, 0, true
	for i := d.i; i < len(d.b); i++ {
		switch c := d.b[i]; c {
		case '"':
			for i++; i < len(d.b) && d.b[i] != '"'; i++ {
				if d.b[i] == '\\' {
					i++
				}
			}
			empty = false
		case '[', '{':
			if depth++; depth > 1 {
				empty = false
			}
		case ']', '}':
			if depth--; depth == 0 {
				if empty {
					return 0
				}
				return n + 1
			}
		case ',':
			if depth == 1 {
				n++
			}
		case ' ', '\t', '\n', '\r':
		default:
			empty = false
		}
	}
	return 0
}

// str reads a string; null leaves *s as it is.
func (d *wireDec) str(s *string) error {
	if d.null() {
		return nil
	}
	raw, plain, err := d.quoted()
	if err != nil {
		return err
	}
	if plain {
		*s = d.names.of(raw[1 : len(raw)-1])
		return nil
	}
	var v string
	if err := d.unmarshal(raw, &v); err != nil {
		return err
	}
	*s = v
	return nil
}

// quoted reads past a string and returns it, quotes included; plain says it holds no escape and no byte
// past ASCII, so its bytes are its text. One that is not plain is decoded by encoding/json, whose rules
// (invalid UTF-8 as U+FFFD, surrogates) it must keep.
func (d *wireDec) quoted() (raw []byte, plain bool, err error) {
	if d.peek() != '"' {
		return nil, false, d.errorf("want a string")
	}
	start := d.i
	d.i++
	plain = true
	for ; d.i < len(d.b); d.i++ {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start:d.i], plain, nil
		case c == '\\':
			plain = false
			d.i++
		case c < 0x20:
			return nil, false, d.errorf("a control character in a string")
		case c >= 0x80:
			plain = false
		}
	}
	return nil, false, d.errorf("a string that does not end")
}

func (d *wireDec) bool(v *bool) error {
	switch {
	case d.literal("true"):
		*v = true
	case d.literal("false"):
		*v = false
	case d.null():
	default:
		return d.errorf("want true or false")
	}
	return nil
}

// number is the bytes of a JSON number at d.
func (d *wireDec) number() ([]byte, error) {
	d.ws()
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			d.i++
			continue
		}
		break
	}
	if d.i == start {
		return nil, d.errorf("want a number")
	}
	return d.b[start:d.i], nil
}

func (d *wireDec) int64(v *int64) error {
	if d.null() {
		return nil
	}
	n, err := d.number()
	if err != nil {
		return err
	}
	if !json.Valid(n) {
		return d.errorf("%q is not a number", n)
	}
	x, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return d.errorf("%q is not a whole number", n)
	}
	*v = x
	return nil
}

func (d *wireDec) int(v *int) error {
	x := int64(*v)
	if err := d.int64(&x); err != nil {
		return err
	}
	if int64(int(x)) != x {
		return d.errorf("%d does not fit", x)
	}
	*v = int(x)
	return nil
}

// time reads a time as encoding/json does (time.Time's UnmarshalJSON); null is nil. text, when not nil, is
// set to the time's text as model keeps it (model.ParseJSONTime): the file's spelling of a manifest's time.
func (d *wireDec) time(t **time.Time, text *string) error {
	if d.null() {
		*t = nil
		return nil
	}
	if len(d.times) == cap(d.times) {
		// A line's times are made several at a time, not one by one: a jonggrang run has four a stage, a
		// fifth of what decoding it allocated (issue 35). Each block twice the last, up to timesAtOnce, so
		// little room is left over; they live as long as the run they belong to.
		d.times = make([]time.Time, 0, min(max(2*cap(d.times), 4), timesAtOnce))
	}
	d.times = d.times[:len(d.times)+1]
	v := &d.times[len(d.times)-1]
	if err := d.timeValue(v, text); err != nil {
		return err
	}
	*t = v
	return nil
}

const timesAtOnce = 32

// timeValue reads a time into a time.Time field, and its text as time does: null leaves them as they are.
func (d *wireDec) timeValue(t *time.Time, text *string) error {
	if d.null() {
		return nil
	}
	raw, _, err := d.quoted()
	if err != nil {
		return err
	}
	v, s, err := model.ParseJSONTime(raw)
	if err != nil {
		return d.errorf("%v", err)
	}
	*t = v
	if text != nil {
		*text = s
	}
	return nil
}

// skip reads past one value, checking it is JSON.
func (d *wireDec) skip() error {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func([]byte) error { return d.skip() })
	case c == '[':
		return d.array(d.skip)
	case c == '"':
		_, _, err := d.quoted()
		return err
	case d.literal("true"), d.literal("false"), d.null():
		return nil
	default:
		n, err := d.number()
		if err == nil && !json.Valid(n) {
			return d.errorf("%q is not a number", n)
		}
		return err
	}
}

// raw decodes the next value into v by encoding/json: for what a line holds one of, or rarely.
func (d *wireDec) raw(v any) error {
	d.ws()
	start := d.i
	if err := d.skip(); err != nil {
		return err
	}
	return d.unmarshal(d.b[start:d.i], v)
}

func (d *wireDec) unmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return d.errorf("%s: %v", te.Field, err)
		}
		return d.errorf("%v", err)
	}
	return nil
}

func (d *wireDec) strs(out *[]string) error {
	return list(d, out, func(s *string) error { return d.str(s) })
}
