// Package userdir is the folders the environment names for runwatch: the temp folder and the user's cache
// folder, found as os.TempDir and os.UserCacheDir find them, but in an environment given per call (getenv)
// rather than this process's, so a test passes its own and runs in parallel.
package userdir

import (
	"errors"
	"path/filepath"
	"runtime"
)

// Temp is the temp folder: $TMPDIR, else /tmp (os.TempDir on Unix).
func Temp(getenv func(string) string) string {
	if d := getenv("TMPDIR"); d != "" {
		return d
	}
	return "/tmp"
}

// Cache is the user's cache folder (os.UserCacheDir): ~/Library/Caches on macOS, else $XDG_CACHE_HOME
// (which must be absolute), else ~/.cache.
func Cache(getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		if home == "" {
			return "", errors.New("$HOME is not defined")
		}
		return filepath.Join(home, "Library", "Caches"), nil
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		if !filepath.IsAbs(d) {
			return "", errors.New("path in $XDG_CACHE_HOME is relative")
		}
		return d, nil
	}
	if home == "" {
		return "", errors.New("neither $XDG_CACHE_HOME nor $HOME are defined")
	}
	return filepath.Join(home, ".cache"), nil
}

// RunwatchCache is runwatch's own folder in the user's cache folder, with sub joined under it, or "" when
// the environment names no cache folder (a caller then keeps no cache). Every cache runwatch keeps lives
// under it.
func RunwatchCache(getenv func(string) string, sub ...string) string {
	base, err := Cache(getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(append([]string{base, "runwatch"}, sub...)...)
}

// Home is the user's home folder: $HOME (os.UserHomeDir on Unix).
func Home(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	return "", errors.New("$HOME is not defined")
}
