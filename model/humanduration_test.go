package model

import (
	"testing"
	"time"
)

// Exactly when the text changes: not a nanosecond before (a wasted frame), not after (a wrong age shown).
func TestHumanDurationChangesExactlyWhenItsTextDoes(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999 * time.Millisecond, time.Second, 59*time.Second + 1, time.Minute,
		time.Hour - 1, time.Hour, 9*time.Hour + 59*time.Minute + 30*time.Second, 47*time.Hour + 59*time.Minute + 59*time.Second,
		48 * time.Hour, 240*time.Hour + 90*time.Minute, -30 * time.Second, -time.Hour - time.Second} {
		g := HumanDurationGrows(d)
		if g <= 0 || HumanDuration(d+g-1) != HumanDuration(d) || HumanDuration(d+g) == HumanDuration(d) {
			t.Errorf("age %v: reads %q until +%v, then %q at +%v", d, HumanDuration(d+g-1), g-1, HumanDuration(d+g), g)
		}
		if d >= time.Second {
			s := HumanDurationShrinks(d)
			if HumanDuration(d-s+1) != HumanDuration(d) || HumanDuration(d-s) == HumanDuration(d) {
				t.Errorf("countdown %v: reads %q until -%v, then %q at -%v", d, HumanDuration(d-s+1), s-1, HumanDuration(d-s), s)
			}
		}
		if len(HumanDuration(d)) != humanWidth(d) {
			t.Errorf("width of %q: %d", HumanDuration(d), humanWidth(d))
		}
	}
}

// An age reads "<1m" for its whole first minute, and changes exactly when its text does, as HumanDuration.
func TestHumanAgeChangesExactlyWhenItsTextDoes(t *testing.T) {
	for _, d := range []time.Duration{0, 1, time.Second, 59*time.Second + 1, time.Minute - 1, time.Minute, time.Hour,
		49 * time.Hour, -1, -999 * time.Millisecond, -time.Second, -90 * time.Second} {
		g := HumanAgeGrows(d)
		if g <= 0 || HumanAge(d+g-1) != HumanAge(d) || HumanAge(d+g) == HumanAge(d) {
			t.Errorf("age %v: reads %q until +%v, then %q at +%v", d, HumanAge(d+g-1), g-1, HumanAge(d+g), g)
		}
	}
	if got := HumanAge(59 * time.Second); got != "<1m" {
		t.Errorf("59s reads %q", got)
	}
	if got := HumanAge(61 * time.Second); got != "1m" {
		t.Errorf("61s reads %q", got)
	}
}

func TestHumanWidthGrows(t *testing.T) {
	for _, d := range []time.Duration{0, 5 * time.Second, 50 * time.Minute, 90 * time.Minute, 9*time.Hour + 59*time.Minute, 100 * time.Hour} {
		g := HumanWidthGrows(d, 1000*time.Hour)
		if len(HumanDuration(d+g-1)) != len(HumanDuration(d)) || len(HumanDuration(d+g)) == len(HumanDuration(d)) {
			t.Errorf("%v (%q): width changes at +%v (%q)", d, HumanDuration(d), g, HumanDuration(d+g))
		}
	}
}

func TestHumanWidthExceeds(t *testing.T) {
	const day = 24 * time.Hour
	if _, ok := HumanWidthExceeds(47*time.Hour, 7, 1000*day); !ok {
		t.Fatal("an age of 47h reads wider than 7 cells one day (1000d0h)")
	}
	if g, ok := HumanWidthExceeds(47*time.Hour, 7, 1000*day); ok && len(HumanDuration(47*time.Hour+g)) <= 7 {
		t.Errorf("at +%v: %q", g, HumanDuration(47*time.Hour+g))
	}
	if g, ok := HumanWidthExceeds(3*time.Hour, 7, day); ok {
		t.Errorf("3h reads wider than 7 cells within a day? at +%v", g)
	}
	if g, ok := HumanWidthExceeds(5*time.Second, 2, day); !ok || g != 5*time.Second {
		t.Errorf("5s is wider than 2 cells at +%v (%v), want +5s", g, ok)
	}
}
