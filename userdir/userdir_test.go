package userdir

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Each folder is the one os.TempDir and os.UserCacheDir find for the same environment.
func TestFoldersAreTheStandardLibrarys(t *testing.T) {
	t.Parallel()
	if got := Temp(env(nil)); got != "/tmp" {
		t.Errorf("Temp without TMPDIR = %q", got)
	}
	if got := Temp(env(map[string]string{"TMPDIR": "/x/tmp"})); got != "/x/tmp" {
		t.Errorf("Temp = %q", got)
	}
	if got, want := Temp(os.Getenv), os.TempDir(); got != want {
		t.Errorf("Temp(os.Getenv) = %q, os.TempDir %q", got, want)
	}
	if h, err := Home(os.Getenv); h != os.Getenv("HOME") || (err == nil) != (h != "") {
		t.Errorf("Home(os.Getenv) = %q, %v", h, err)
	}
	if _, err := Home(env(nil)); err == nil {
		t.Error("Home without HOME: no error")
	}
	want, wantErr := os.UserCacheDir()
	if got, err := Cache(os.Getenv); got != want || (err == nil) != (wantErr == nil) {
		t.Errorf("Cache(os.Getenv) = %q, %v; os.UserCacheDir %q, %v", got, err, want, wantErr)
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return // ~/Library/Caches, whatever XDG_CACHE_HOME says
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
		ok   bool
	}{
		{map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/h"}, "/c", true},
		{map[string]string{"HOME": "/h"}, "/h/.cache", true},
		{map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/h"}, "", false},
		{nil, "", false},
	} {
		got, err := Cache(env(tc.env))
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("Cache(%v) = %q, %v", tc.env, got, err)
		}
	}
}

// runwatch's caches all live in one folder of the user's cache folder, and none without one.
func TestRunwatchCache(t *testing.T) {
	t.Parallel()
	ann := env(map[string]string{"HOME": "/home/ann", "XDG_CACHE_HOME": "/var/cache/ann"})
	want, _ := Cache(ann)
	if got := RunwatchCache(ann, "artifact-index"); got != filepath.Join(want, "runwatch", "artifact-index") {
		t.Errorf("RunwatchCache = %q, want under %q", got, want)
	}
	if got := RunwatchCache(func(string) string { return "" }); got != "" {
		t.Errorf("with no HOME nor XDG_CACHE_HOME: %q, want no cache", got)
	}
}
