package listen_test

import (
	"fmt"

	"github.com/bulwarkmcp/bulwark/kernel/listen"
)

// A bare port binds loopback; naming another interface is the operator's
// explicit choice.
func ExampleParse() {
	for _, in := range []string{":8080", "0.0.0.0:8080", "8080:x"} {
		addr, err := listen.Parse(in)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(addr, listen.Loopback(addr))
	}
	// Output:
	// 127.0.0.1:8080 true
	// 0.0.0.0:8080 false
	// "8080:x": the port must be a number from 0 to 65535
}
