// Package text holds what every part of the dashboard does to a string before it reaches the terminal:
// sanitising untrusted text (sanitize.go), measuring, cutting and wrapping it (width.go), and drawing long
// lines with styles that survive wrapping and windowing (longtext.go). It knows no component.
//
// sanitize.go: the dashboard's door to termsafe, the one rule between run files and the terminal.
package text

import "runwatch/termsafe"

// Sanitize makes untrusted text (log lines, phase names, errors, paths from run files) safe to print in the
// dashboard's cell grid: termsafe.Screen, the one rule every surface uses.
func Sanitize(s string) string { return termsafe.Screen(s) }

// SanitizeLines splits untrusted multi-line text into sanitized lines (termsafe.ScreenLines).
func SanitizeLines(s string) []string { return termsafe.ScreenLines(s) }
