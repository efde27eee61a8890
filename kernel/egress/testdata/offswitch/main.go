// Command offswitch tries to turn a kernel server's egress gate off outside
// a test binary; TestSwitchRefusedOutsideTests expects it to panic.
package main

import (
	"fmt"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

func main() {
	ks, err := kernel.New(kernel.Info{Name: "offswitch"}, nil, &kernel.Options{})
	if err != nil {
		fmt.Println("kernel.New:", err)
		return
	}
	egress.SetGate(ks, false)
	fmt.Println("the gate was turned off")
}
