//go:build linux || darwin || freebsd

package sqlitestore

import "syscall"

// volumeSpace returns the size of the file system that holds dir and the
// bytes free on it for an unprivileged writer; ok is false when the system
// does not say.
func volumeSpace(dir string) (total, free int64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, false
	}
	bs := int64(st.Bsize)
	return int64(st.Blocks) * bs, int64(st.Bavail) * bs, true
}
