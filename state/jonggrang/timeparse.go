package jonggrang

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are the timestamp spellings seen in manifests: JavaScript toISOString (quoted by js-yaml),
// unquoted YAML timestamps written by hand or by agents (which YAML allows with a space and a lowercase t),
// plain dates, and the compact run-id style.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 Z07:00",
	"2006-01-02 15:04:05.999999999 -07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
	"20060102T150405Z",
	time.RFC1123Z,
	time.RFC1123,
	// JavaScript Date.prototype.toString, after its "(zone name)" suffix is cut.
	"Mon Jan 02 2006 15:04:05 GMT-0700",
}

// upperTZ spells the date/time separator and the UTC zone as time.Parse's layouts do.
var upperTZ = strings.NewReplacer("t", "T", "z", "Z")

// parseTime reads a timestamp in any of the spellings above, or a Unix epoch number (seconds, or
// milliseconds as Date.now() gives). Times without a zone are taken as UTC, which is what the writers use.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	norm := upperTZ.Replace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, norm); err == nil {
			return t.UTC(), true
		}
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n < 1e14 {
		// Anything past 1e11 as seconds is after the year 5000: it must be milliseconds (Date.now()).
		if n > 1e11 {
			return time.UnixMilli(n).UTC(), true
		}
		return time.Unix(n, 0).UTC(), true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && f > 0 {
		if f > 1e11 {
			f /= 1000
		}
		if f < 1e11 {
			sec, frac := math.Modf(f)
			return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
		}
	}
	return time.Time{}, false
}
