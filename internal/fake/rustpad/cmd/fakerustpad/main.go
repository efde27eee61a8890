// Command fakerustpad runs the fake Rustpad (internal/fake/rustpad) on a
// loopback port until it is interrupted, for end-to-end tests of
// `bulwark rustpad` with third-party clients (scripts/e2e). It prints
// "listening http://127.0.0.1:PORT" once it accepts connections.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := rustpad.New()
	fmt.Printf("listening %s\n", s.URL)
	<-ctx.Done()
	s.Close()
}
