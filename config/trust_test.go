package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A config names commands runwatch runs, so one that someone else could have written is refused, naming the
// file and why, as ssh refuses such a ~/.ssh/config.
func TestConfigWritableOrOwnedByOthersIsRefused(t *testing.T) {
	t.Parallel()
	const body = "notify:\n  command: /bin/true\n"
	other := 65534
	if os.Geteuid() == other {
		other = 65533
	}
	for _, c := range []struct {
		name  string
		setup func(path string) error
		want  []string
	}{
		{"group-writable", func(p string) error { return os.Chmod(p, 0o664) }, []string{"mode 0664", "chmod go-w"}},
		{"world-writable", func(p string) error { return os.Chmod(p, 0o646) }, []string{"mode 0646"}},
		{"owned by another user", func(p string) error { return os.Chown(p, other, other) },
			[]string{"owned by uid " + itoa(other), "not by you"}},
		{"folder writable by others", func(p string) error { return os.Chmod(filepath.Dir(p), 0o777) },
			[]string{"its folder", "mode 0777"}},
		{"folder owned by another user", func(p string) error { return os.Chown(filepath.Dir(p), other, other) },
			[]string{"its folder", "owned by uid " + itoa(other)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeConfig(t, body)
			if err := c.setup(path); err != nil {
				if os.Geteuid() != 0 && strings.Contains(c.name, "owned") {
					t.Skip("chown needs root")
				}
				t.Fatal(err)
			}
			_, err := Load(path, os.Getenv)
			if err == nil {
				t.Fatalf("loaded")
			}
			for _, w := range append(c.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// the user's own file, and one in a sticky folder (only a file's owner can replace it there)
	if _, err := Load(writeConfig(t, body), os.Getenv); err != nil {
		t.Errorf("own config: %v", err)
	}
	sticky := t.TempDir()
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sticky, "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, os.Getenv); err != nil {
		t.Errorf("own config in a sticky folder: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A FIFO (or a device) where the config is expected is refused at once, explicit or default: it must not
// hang a command or a TAB completion.
func TestConfigFIFOIsRefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(fifo, os.Getenv); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe (FIFO))") || !strings.Contains(err.Error(), fifo) {
			t.Errorf("FIFO config: %v", err)
		}
	case <-time.After(time.Minute): // bounds a hang; a pass takes microseconds
		t.Fatal("Load blocked on a FIFO")
	}
	if _, err := Load("/dev/zero", os.Getenv); err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("/dev/zero as config: %v", err)
	}
}

// A relative program in a command the config names is refused with its line: it would be found from
// whatever folder runwatch (or the resume command's run folder) is in.
func TestRelativeProgramsAreRefused(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"theme: auto\nnotify:\n  command: ./hook.sh {{.ID}}\n": "line 3: notify.command: the program \"./hook.sh\" is a relative path",
		"resume_command:\n  jonggrang: 'bin/agent {{.ID}}'\n":  "line 2: resume_command.jonggrang: the program \"bin/agent\"",
		"ssh:\n  command: [../ssh, -F, x]\n":                   "line 2: ssh.command: the program \"../ssh\"",
	} {
		_, err := Load(writeConfig(t, body), os.Getenv)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	for _, ok := range []string{"notify:\n  command: notify-send {{.ID}}\n", "notify:\n  command: /usr/bin/env x\n",
		"resume_command:\n  resumable: '{{.Dir}}/resume.sh'\n", "ssh:\n  command: [ssh, -F, ./fleet]\n"} {
		if _, err := Load(writeConfig(t, ok), os.Getenv); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// Issue 37.1: ssh.runwatch is the one word of ours a host's login shell reads, so it is made of characters
// no shell gives a meaning to; anything else is refused with the file, the line and what to write.
func TestRemoteProgramMustBeSafeWords(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"x';touch /tmp/PWN;'", "~/bin/runwatch", "run watch", "$HOME/runwatch", "-oX", "a\\'b"} {
		path := writeConfig(t, "theme: auto\nssh:\n  runwatch: \""+strings.ReplaceAll(bad, `\`, `\\`)+"\"\n")
		_, err := Load(path, os.Getenv)
		if err == nil || !strings.Contains(err.Error(), "config "+path+": line 3: ssh.runwatch: the remote program") ||
			!strings.Contains(err.Error(), "/opt/runwatch/bin/runwatch") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, ok := range []string{"runwatch", "/opt/runwatch-1.2/bin/runwatch", "bin/runwatch_x"} {
		if cfg, err := Load(writeConfig(t, "ssh:\n  runwatch: "+ok+"\n"), os.Getenv); err != nil || cfg.SSH.Runwatch != ok {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestKeyLines(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "theme: auto\nkeys:\n  copy: [c]\n  unlock: [u]\n"), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.KeyLines["copy"] != 3 || cfg.KeyLines["unlock"] != 4 {
		t.Errorf("key lines %v", cfg.KeyLines)
	}
}

// Every folder on the config's path is checked, as ssh's StrictModes does, with links resolved: a link
// from a safe folder into a folder others can write, or a grandparent others can write, lets them replace
// the file as surely as its own folder would.
func TestConfigPathFoldersOthersCouldWriteAreRefused(t *testing.T) {
	t.Parallel()
	const body = "notify:\n  command: /bin/true\n"
	t.Run("link into a folder others can write", func(t *testing.T) {
		open := filepath.Join(t.TempDir(), "open")
		if err := os.Mkdir(open, 0o755); err != nil {
			t.Fatal(err)
		}
		real := filepath.Join(open, "real.yaml")
		if err := os.WriteFile(real, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(open, 0o777); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		_, err := Load(link, os.Getenv)
		for _, w := range []string{link, "the folder " + open + " on its path", "mode 0777"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v does not say %q", err, w)
			}
		}
	})
	t.Run("grandparent others can write", func(t *testing.T) {
		gp := filepath.Join(t.TempDir(), "gp")
		path := filepath.Join(gp, "runwatch", "config.yaml")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(gp, 0o757); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, os.Getenv)
		for _, w := range []string{path, "the folder " + gp + " on its path", "mode 0757"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v does not say %q", err, w)
			}
		}
		// The default path is checked the same way: a missing config is no error, one there is.
		if _, err := load("", defaultIn(gp), os.UserHomeDir); err == nil {
			t.Error("the default config under a grandparent others can write was loaded")
		}
	})
}
