package sqlitestore

import (
	"errors"

	sqlite3 "modernc.org/sqlite/lib"
)

// transient reports whether err says SQLite could not read or write now
// but the same call may succeed later, with nothing wrong with the call or
// the database:
//
//   - SQLITE_FULL: the disk (or the file system's quota) is full;
//   - SQLITE_IOERR and its extended codes: the operating system failed a
//     read, write, fsync or lock;
//   - SQLITE_BUSY, SQLITE_LOCKED: another connection or process held a
//     lock beyond the busy timeout the store sets (its own retries,
//     busy_timeout, gave up);
//   - SQLITE_PROTOCOL: the WAL lock protocol lost a race too often;
//   - SQLITE_CANTOPEN: the file (or its -wal or -shm, or a temporary file)
//     could not be opened: out of file descriptors, a directory gone or
//     made unreadable;
//   - SQLITE_READONLY: the file or its file system became read-only (a
//     remount, a permission change), which the operator can undo;
//   - the store being closed while the call waited.
//
// Damage (SQLITE_CORRUPT, SQLITE_NOTADB), constraint violations, misuse
// and the caller's own cancellation are not transient.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errClosed) {
		return true
	}
	var coded interface{ Code() int } // *sqlite.Error
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED,
		sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY:
		return true
	}
	return false
}
