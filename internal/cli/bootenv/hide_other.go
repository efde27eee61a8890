//go:build !linux

package bootenv

import "errors"

func reexec([]byte) error { return errUnsupported }

func receive(fdText string, m map[string]string) error {
	return errors.New(fdVar + " is set, but this platform hands secrets over only on Linux")
}
