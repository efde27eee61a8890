//go:build !linux

package cli

import "os"

// fileIsTerminal approximates a terminal check where no ioctl is wired:
// a character device that is not /dev/null.
func fileIsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && f.Name() != os.DevNull
}
