package gateway

// DisableCgroups makes the gateway behave as where cgroup v2 is not
// available (a child subreaper instead); it returns the undo.
func DisableCgroups() func() {
	noCgroup.Store(true)
	return func() { noCgroup.Store(false) }
}

// CgroupBase is the gateway's own cgroup v2 directory, "" if there is none.
func CgroupBase() string { return ownCgroup() }

// RemoveStale is removeStale.
func RemoveStale(base string) { removeStale(base) }
