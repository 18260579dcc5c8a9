package sqlitestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// DefaultFileMode is the permission of the database files when
// Options.FileMode is zero: read and write for the owner only. The files
// hold tasks, messages and webhook addresses, and push credentials when no
// push key is given.
const DefaultFileMode fs.FileMode = 0o600

// companions are the suffixes of the files SQLite keeps next to a
// database: the write-ahead log and its index in WAL mode, and the
// rollback journal a database left in another journal mode may have.
var companions = []string{"-wal", "-shm", "-journal"}

// prepareFiles makes sure the database file exists with at most the given
// permission bits before SQLite opens it. A new file is created with mode
// exactly, whatever the process umask. An existing file, and any companion
// file left next to it, keeps only the bits it has in common with mode:
// Open narrows a file's permissions, never widens them. A file owned by
// another user, which the process may not change, is left as it is.
//
// SQLite then creates the -wal and -shm files (and any journal) with the
// permissions of the database file itself, setting them explicitly rather
// than through the umask, so those get the same mode too.
func prepareFiles(path string, mode fs.FileMode) error {
	if mode&^0o666 != 0 || mode&0o600 != 0o600 {
		return fmt.Errorf("file mode %#o: want read and write for the owner and no bits beyond 0666", mode)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	switch {
	case err == nil:
		// The umask may have cleared bits of mode; set it exactly.
		err = errors.Join(f.Chmod(mode), f.Close())
		if err != nil {
			return err
		}
	case errors.Is(err, fs.ErrExist):
		if err := narrow(path, mode); err != nil {
			return err
		}
	default:
		return err
	}
	for _, suffix := range companions {
		if err := narrow(path+suffix, mode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// narrow removes from an existing file the permission bits that mode does
// not have.
func narrow(path string, mode fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil // no permission bits to speak of
	}
	perm := fi.Mode().Perm()
	if perm&^mode == 0 {
		return nil
	}
	if err := os.Chmod(path, perm&mode); err != nil && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return nil
}
