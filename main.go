// Command runwatch is a terminal dashboard for long-running AI-agent runs that keep their state on disk.
package main

import (
	"os"

	"runwatch/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
