package localzone

import (
	"io/fs"
	"syscall"
)

// sysKey returns the device, inode and change time of fi.
func sysKey(fi fs.FileInfo) (dev, ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return st.Dev, st.Ino, st.Ctim.Sec*1e9 + st.Ctim.Nsec
}
