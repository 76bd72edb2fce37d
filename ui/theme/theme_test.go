package theme

import "testing"

func TestDarkFromColorFGBG(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"15;0": true, "0;15": false, "0;default;7": false, "7;8": true} {
		if dark, ok := DarkFromColorFGBG(v); !ok || dark != want {
			t.Errorf("COLORFGBG=%q: dark=%v ok=%v, want dark=%v", v, dark, ok, want)
		}
	}
	if _, ok := DarkFromColorFGBG("nonsense"); ok {
		t.Error("nonsense COLORFGBG was taken as an answer")
	}
}
