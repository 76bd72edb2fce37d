#!/bin/sh
# Regenerates the dashboard screenshots: the real model renders the demo workspace (fixed seed, clock and machine
# facts) at fixed sizes into screenshots/NAME.ansi (go test ./ui -run TestScreenshots -update, see
# ui/screenshots_test.go), freeze turns each frame into screenshots/NAME.png, and SHA256SUMS records which frame
# each PNG was drawn from. TestScreenshots, in the normal test run, fails when either is stale.
#   screenshots/make.sh            (from the repository root)
# Needs: go, freeze (go install github.com/charmbracelet/freeze@v0.2.2), rsvg-convert (librsvg2-bin) and the
# DejaVu Sans Mono font.
set -eu
cd "$(dirname "$0")/.."
freeze="${FREEZE:-$(command -v freeze || echo "$HOME/go/bin/freeze")}"
[ -x "$freeze" ] || { echo "make.sh: freeze not found; go install github.com/charmbracelet/freeze@v0.2.2" >&2; exit 1; }
command -v rsvg-convert >/dev/null || { echo "make.sh: rsvg-convert not found; apt-get install librsvg2-bin" >&2; exit 1; }
command -v sha256sum >/dev/null || { echo "make.sh: sha256sum not found (coreutils)" >&2; exit 1; }
frames="$(mktemp -d)"
trap 'rm -rf "$frames"' EXIT
rm -f screenshots/*.ansi
# The test fails here on the PNGs not drawn yet; only the frames it writes count.
go test ./ui -run '^TestScreenshots$' -count=1 -update >"$frames/test.log" 2>&1 || true
ls screenshots/*.ansi >/dev/null 2>&1 || { cat "$frames/test.log" >&2; echo "make.sh: go test ./ui -run TestScreenshots -update wrote no frame" >&2; exit 1; }
for f in screenshots/*.ansi; do
	name="$(basename "$f" .ansi)"
	# freeze v0.2.2 leaves out the last line of its input (the footer's message line); a blank line after
	# it is what gets dropped instead.
	# A light frame is painted as a light terminal shows it: white, and text without a colour of its own in
	# a dark default foreground (freeze takes it from its syntax theme; its default paints #c4c4c4, which
	# on white made the names look faint when the theme draws them in the terminal's own colour).
	bg=""
	case "$name" in *-light) bg="--theme github --background #ffffff" ;; esac
	# freeze v0.2.2's own PNG renderer crashes on some machines (unsafe.Slice: len out of range) and, where it
	# does not, draws in a proportional font when JetBrains Mono is not installed: its SVG, in a monospace
	# font that is (DejaVu Sans Mono), is made a PNG by rsvg-convert (librsvg2-bin).
	# shellcheck disable=SC2086 # bg is four words or none
	{ cat "$f"; printf '\n '; } | "$freeze" --language ansi --window --font.size 7 --font.family "DejaVu Sans Mono" $bg -o "$frames/$name.svg" >/dev/null
	rsvg-convert --zoom 4 "$frames/$name.svg" -o "screenshots/$name.png"
	echo "screenshots/$name.png"
done
(cd screenshots && sha256sum -- *.ansi *.png >SHA256SUMS)
go test ./ui -run '^TestScreenshots$' -count=1
