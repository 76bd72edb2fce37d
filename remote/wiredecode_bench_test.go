package remote

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

// BenchmarkDecodeWire decodes the lines of a host's `runwatch events` saved in RUNWATCH_WIRE_LINES (e.g. of
// 1,000 generated runs: go run ./bench/genruns DIR 1000; RUNWATCH_EXIT_WITH_STDIN=1 runwatch events DIR).
func BenchmarkDecodeWire(b *testing.B) {
	path := os.Getenv("RUNWATCH_WIRE_LINES")
	if path == "" {
		b.Skip("set RUNWATCH_WIRE_LINES to a file of events lines")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	size := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
		size += len(sc.Bytes())
	}
	for _, named := range []bool{false, true} {
		b.Run(fmt.Sprintf("names=%v", named), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				var names *wireNames
				if named {
					names = newWireNames() // a stream's, from its first line
				}
				for _, l := range lines {
					var ev wireEvent
					if err := decodeWire(l, &ev, names); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
