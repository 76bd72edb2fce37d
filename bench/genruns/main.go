// Command genruns writes N run roots of both conventions (the simulator's generator) into DIR, for measuring
// the real binary by hand: go run ./bench/genruns /tmp/runs 1000 && runwatch /tmp/runs
package main

import (
	"fmt"
	"os"
	"strconv"

	"runwatch/sim"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genruns DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintf(os.Stderr, "genruns: N must be a whole number, got %q\n", os.Args[2])
		os.Exit(2)
	}
	paths, err := sim.GenerateRuns(os.Args[1], n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genruns:", err)
		os.Exit(1)
	}
	fmt.Printf("%d runs under %s\n", len(paths), os.Args[1])
}
