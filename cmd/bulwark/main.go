// Command bulwark serves MCP servers that are safe to hand to an AI model.
// Run "bulwark help" for the servers and their flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/bulwarkmcp/bulwark/internal/cli"
	"github.com/bulwarkmcp/bulwark/internal/cli/bootenv"
)

func main() {
	if err := bootenv.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "bulwark:", err)
		os.Exit(2)
	}
	// On Linux this re-executes the binary once, without the secret
	// variables in its environment, when any is set.
	vars, err := bootenv.Hide()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bulwark:", err)
		os.Exit(2)
	}
	if vars.Warning != "" {
		fmt.Fprintln(os.Stderr, "bulwark: warning:", vars.Warning)
	}
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
