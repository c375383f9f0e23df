package watch

// op is what happened to a path, as the file system watcher reports it.
type op uint8

const (
	opCreate op = 1 << iota // created, or moved in
	opRemove                // removed
	opWrite                 // written
	opRename                // moved away

	opAll = opCreate | opRemove | opWrite | opRename
)

// fsEvent is one event of the file system watcher ([fsWatcher]) on a
// registration's channel.
type fsEvent struct {
	path string // symbolic links resolved
	op   op
	// overflow says events were lost (the kernel's queue overflowed): the
	// root needs a rescan. path and op are empty then.
	overflow bool
}

// send hands ev to reg without blocking: an event that does not fit is
// dropped, and the drain goroutine, seeing the channel full, has the root
// rescanned.
func send(reg *registration, ev fsEvent) {
	select {
	case reg.ch <- ev:
	default:
	}
}
