// Command bulwark serves MCP servers that are safe to hand to an AI model.
// Run "bulwark help" for the servers and their flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/bulwarkmcp/bulwark/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.Env{
		Args:     os.Args[1:],
		Getenv:   os.Getenv,
		Unsetenv: os.Unsetenv,
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
	})
	stop()
	os.Exit(code)
}
