// Package remote follows run roots on other machines over the user's own OpenSSH: one ssh process per host
// runs `runwatch events` there and its JSON lines are merged into the local model, and actions run as the
// remote runwatch's subcommands, so every write-safety rule applies where the files are.
package remote

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Root is a run root on another machine.
type Root struct {
	// User and Host are given to ssh as written ([user@]host); Host may be an alias of the user's ssh config.
	User string
	Host string
	// Port is empty when ssh's own default (or the ssh config) decides.
	Port string
	// Path is the folder on the remote host, as written (relative paths are relative to the remote home).
	Path string
}

// Dest is the destination argument for ssh.
func (r Root) Dest() string {
	if r.User != "" {
		return r.User + "@" + r.Host
	}
	return r.Host
}

// Label names the host in the dashboard, in JSON and in `host:` filters: the ssh destination as written,
// with the user and the port when given. It is the host's identity here: two roots with one label are one
// connection, so root@alpha and alpha (or alpha:2222) are two hosts, each with its own health and runs.
func (r Root) Label() string {
	l := r.Dest()
	if r.Port != "" {
		l += ":" + r.Port
	}
	return l
}

// HostArg is the host as `runwatch install` takes it: [user@]host, or ssh://[user@]host:port with a port.
func (r Root) HostArg() string {
	if r.Port != "" {
		return "ssh://" + r.Dest() + ":" + r.Port
	}
	return r.Dest()
}

// Conn is what identifies one ssh connection: roots with the same Conn share one ssh process.
func (r Root) Conn() string { return r.Dest() + "|" + r.Port }

// String writes the root back in URL form, which Parse reads again to the same Root.
func (r Root) String() string {
	hostport := r.Host
	if r.Port != "" {
		hostport += ":" + r.Port
	}
	user := ""
	if r.User != "" {
		user = r.User + "@"
	}
	p := r.Path
	if !strings.HasPrefix(p, "/") {
		p = "/~/" + p
	}
	return "ssh://" + user + hostport + p
}

// Parse reads ssh://[user@]host[:port]/path and the scp style [user@]host:path. It reports ok=false for an
// argument that is a local path: anything that exists here, or whose part before the first colon holds a
// slash (./a:b), as scp decides. A remote-looking argument that is malformed is an error.
func Parse(arg string) (Root, bool, error) {
	if rest, ok := strings.CutPrefix(arg, "ssh://"); ok {
		// The path is everything after the host, as written: a folder name may hold # or ?, which a URL
		// parser would take for a fragment or a query and cut off, and % (no escapes: String writes none).
		authority, path := rest, ""
		if slash := strings.IndexByte(rest, '/'); slash >= 0 {
			authority, path = rest[:slash], rest[slash:]
		}
		u, err := url.Parse("ssh://" + authority)
		if err != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
			if err == nil {
				err = errors.New("the host part holds ? or #")
			}
			return Root{}, true, fmt.Errorf("%q is not a valid ssh:// root: %v", arg, err)
		}
		r := Root{Host: u.Hostname(), Port: u.Port(), Path: path}
		if u.User != nil {
			r.User = u.User.Username()
		}
		if strings.HasPrefix(r.Path, "/~/") {
			r.Path = strings.TrimPrefix(r.Path, "/~/")
		} else if r.Path == "/~" {
			r.Path = "."
		}
		return r, true, r.check(arg)
	}
	colon := strings.IndexByte(arg, ':')
	if colon <= 0 || strings.Contains(arg[:colon], "/") {
		return Root{}, false, nil
	}
	if _, err := os.Lstat(arg); err == nil {
		return Root{}, false, nil
	}
	r := Root{Host: arg[:colon], Path: arg[colon+1:]}
	if at := strings.LastIndexByte(r.Host, '@'); at >= 0 {
		r.User, r.Host = r.Host[:at], r.Host[at+1:]
	}
	if r.Path == "" {
		r.Path = "."
	}
	return r, true, r.check(arg)
}

func (r Root) check(arg string) error {
	switch {
	case r.Host == "":
		return fmt.Errorf("%q names no host (want ssh://[user@]host[:port]/path or host:path)", arg)
	case strings.HasPrefix(r.Host, "-") || strings.HasPrefix(r.User, "-"):
		// ssh would take it as an option.
		return fmt.Errorf("%q: a host or user may not start with '-'", arg)
	case strings.ContainsAny(r.Host, "/@") || strings.ContainsAny(r.Host+r.User, "/ \t\n\r\x00") || !printableName(r.Host+r.User):
		// A label is the host's identity in run keys (model.RemoteKey), where the first slash ends it; it is
		// printed in messages and questions as it is, so no escape sequence or bidi mark may ride in it.
		return fmt.Errorf("%q: a host or user may not hold '/', spaces or control characters (nor a host '@')", arg)
	case r.Path == "":
		return fmt.Errorf("%q names no path on %s (want ssh://%s/path)", arg, r.Host, r.Host)
	}
	if r.Port != "" {
		if n, err := strconv.Atoi(r.Port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %q is not a port number", arg, r.Port)
		}
	}
	return nil
}

// printableName is whether s is valid UTF-8 without control or format characters (ESC, C1, bidi marks).
func printableName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			return false
		}
	}
	return true
}

// Split separates remote roots from local paths, keeping each list in the order given.
func Split(args []string) (local []string, roots []Root, err error) {
	for _, a := range args {
		r, isRemote, perr := Parse(a)
		switch {
		case perr != nil:
			return nil, nil, perr
		case isRemote:
			roots = append(roots, r)
		default:
			local = append(local, a)
		}
	}
	return local, roots, nil
}
