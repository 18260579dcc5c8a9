//go:build unix

package sqlitestore

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// withUmask runs fn with the process umask set to mask. The umask belongs
// to the whole process, so tests that call it must not run in parallel
// (and top-level tests that do not call t.Parallel never do).
func withUmask(mask int, fn func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

// modes returns the permission bits of every file in dir, by name.
func modes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fs.FileMode{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fi.Mode().Perm()
	}
	return out
}

// writeSome makes the store write to its database and WAL, push secrets
// included.
func writeSome(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	if err := s.CreateTask(ctx, scope, newTask("task-1", a2a.TaskState_TASK_STATE_WORKING, 1), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, scope, secretConfig("task-1", "p1"), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
}

// TestFileModes opens stores under umasks 022 and 000 and checks the mode
// of every file the store created: the database, its -wal and its -shm.
func TestFileModes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		umask int
		mode  fs.FileMode // Options.FileMode
		want  fs.FileMode
	}{
		{"default under umask 022", 0o022, 0, 0o600},
		{"default under umask 000", 0o000, 0, 0o600},
		{"default under umask 077", 0o077, 0, 0o600},
		{"0640 under umask 022", 0o022, 0o640, 0o640},
		{"0640 under umask 077", 0o077, 0o640, 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			withUmask(tc.umask, func() {
				s, err := OpenWith(filepath.Join(dir, "tasks.db"), &Options{FileMode: tc.mode})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				writeSome(t, s)
				got := modes(t, dir)
				names := slices.Sorted(func(yield func(string) bool) {
					for n := range got {
						if !yield(n) {
							return
						}
					}
				})
				if want := []string{"tasks.db", "tasks.db-shm", "tasks.db-wal"}; !slices.Equal(names, want) {
					t.Errorf("files = %v, want %v", names, want)
				}
				for name, m := range got {
					if m != tc.want {
						t.Errorf("mode of %s = %#o, want %#o", name, m, tc.want)
					}
				}
			})
		})
	}
}

// TestExistingFileModes checks what Open does to files that exist: it
// narrows a mode wider than FileMode (the 0644 of older versions, and a
// WAL left by a crash), and never widens one.
func TestExistingFileModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing fs.FileMode
		mode     fs.FileMode // Options.FileMode
		want     fs.FileMode
	}{
		{"0644 narrowed", 0o644, 0, 0o600},
		{"0666 narrowed", 0o666, 0, 0o600},
		{"0600 kept", 0o600, 0, 0o600},
		{"0644 narrowed to 0640", 0o644, 0o640, 0o640},
		{"0600 not widened to 0640", 0o600, 0o640, 0o600},
		{"0604 meets 0640", 0o604, 0o640, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tasks.db")
			// A database left by a crash: the WAL and its index are still there.
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			writeSome(t, s)
			for _, name := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Chmod(name, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			copyDir(t, dir, filepath.Join(dir, "crashed"))
			s.Close()

			crashed := filepath.Join(dir, "crashed")
			s, err = OpenWith(filepath.Join(crashed, "tasks.db"), &Options{FileMode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.GetTask(t.Context(), scope, "task-1"); err != nil {
				t.Errorf("the crashed database lost its task: %v", err)
			}
			for name, m := range modes(t, crashed) {
				if m != tc.want {
					t.Errorf("mode of %s = %#o, want %#o", name, m, tc.want)
				}
			}
		})
	}
}

// copyDir copies the regular files of src into a new directory dst,
// keeping their modes.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := e.Info()
		out := filepath.Join(dst, e.Name())
		if err := os.WriteFile(out, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(out, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFileModeRefused(t *testing.T) {
	t.Parallel()
	for _, m := range []fs.FileMode{0o400, 0o200, 0o700, 0o755, 0o4600} {
		dir := t.TempDir()
		s, err := OpenWith(filepath.Join(dir, "tasks.db"), &Options{FileMode: m})
		if err == nil {
			s.Close()
			t.Errorf("OpenWith(FileMode %#o) succeeded", m)
			continue
		}
		if !strings.Contains(err.Error(), "file mode") {
			t.Errorf("OpenWith(FileMode %#o) error %q does not name the file mode", m, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("OpenWith(FileMode %#o) left files behind", m)
		}
	}
}
