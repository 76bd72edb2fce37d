//go:build !linux

package watch

// remoteFS knows no filesystem types off Linux; polling can still be forced with Options.Poll.
func remoteFS(string) (string, bool) { return "", false }
