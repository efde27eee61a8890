// Command bulwark serves MCP servers that are safe to hand to an AI model.
// Run "bulwark help" for the servers and their flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/bulwarkmcp/bulwark/internal/cli"
	"github.com/bulwarkmcp/bulwark/internal/cli/bootenv"
)

func main() {
	// On Linux, when a secret variable is set, this re-executes the binary
	// once without it in the environment (docs/security.md, Credentials).
	vars := bootenv.Start(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.Env{
		Args:     os.Args[1:],
		Getenv:   vars.Getenv,
		Unsetenv: vars.Unsetenv,
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
	})
	stop()
	os.Exit(code)
}
