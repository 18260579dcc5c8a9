package sqlitestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

func TestWALBudget(t *testing.T) {
	for _, c := range []struct {
		total, want int64
	}{
		{0, walCheckpointPages},  // the volume's size is not known
		{-1, walCheckpointPages}, // nor here
		{16 << 20, 512},          // 2 MiB of 4 KiB pages on a 16 MiB volume
		{1 << 20, minWALPages},   // a tiny volume still gets the floor
		{8 * walCheckpointPages * pageSize, walCheckpointPages},
		{1 << 40, walCheckpointPages}, // a large volume keeps SQLite's checkpoint cost low
	} {
		if got := walBudget(c.total, pageSize); got != c.want {
			t.Errorf("walBudget(%d) = %d pages, want %d", c.total, got, c.want)
		}
	}
}

// TestWALPragmas: the writer connection checkpoints at the budget of the
// volume it lives on and truncates the log back to it.
func TestWALPragmas(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	total, _, _ := volumeSpace(filepath.Dir(s.wal.path))
	want := walBudget(total, pageSize)
	for pragma, w := range map[string]int64{"wal_autocheckpoint": want, "journal_size_limit": want * pageSize} {
		var got int64
		if err := s.writer.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("PRAGMA %s = %d, want %d", pragma, got, w)
		}
	}
}

// TestWALCheckpoint: the keeper asks for a checkpoint when free space is
// short or the log outgrew twice its budget, and a checkpoint leaves the
// log empty with every write still read back.
func TestWALCheckpoint(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := context.Background()
	for i := range 50 {
		if err := s.CreateTask(ctx, scope, newTask(fmt.Sprintf("task-%03d", i), a2a.TaskState_TASK_STATE_WORKING, i), taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(s.wal.path)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("the WAL after 50 writes: %v %v", fi, err)
	}

	_, free, ok := volumeSpace(filepath.Dir(s.wal.path))
	if !ok || free < 4*fi.Size() {
		t.Skipf("the temporary directory's volume has %d bytes free (known: %v)", free, ok)
	}
	for _, c := range []struct {
		name   string
		budget int64
		want   walCheckpoint
	}{
		{"the log within its budget, free space plenty", fi.Size(), walNone},
		{"the log past twice its budget", fi.Size()/2 - 1, walTruncate},
		{"free space below twice the budget", free, walTruncate},
	} {
		k := walKeeper{path: s.wal.path, dir: s.wal.dir, budget: c.budget}
		if got := k.needed(time.Now()); got != c.want {
			t.Errorf("%s: needed = %v, want %v", c.name, got, c.want)
		}
	}

	if done, err := s.checkpoint(ctx, false); !done || err != nil {
		t.Fatalf("checkpoint: done %v, %v", done, err)
	}
	if fi, err := os.Stat(s.wal.path); err != nil || fi.Size() != 0 {
		t.Fatalf("the WAL after a checkpoint: %d bytes, %v; want 0", fi.Size(), err)
	}
	for i := range 50 {
		if _, err := s.GetTask(ctx, scope, fmt.Sprintf("task-%03d", i)); err != nil {
			t.Fatalf("task %d after a checkpoint: %v", i, err)
		}
	}
}

// TestWALShortPaced: while the volume's free space is short, a commit is
// followed by a PASSIVE checkpoint, and the TRUNCATE (which waits for
// readers) comes once per walCheckEvery, not after every commit; the idle
// timer still leaves the log empty.
func TestWALShortPaced(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	_, free, ok := volumeSpace(filepath.Dir(s.wal.path))
	if !ok {
		t.Skip("the volume's free space is not known here")
	}
	k := walKeeper{path: s.wal.path, dir: s.wal.dir, budget: free} // free < 2 × budget: short
	t0 := time.Now()
	for _, c := range []struct {
		after time.Duration
		want  walCheckpoint
	}{
		{0, walTruncate},                    // the first look finds the space short
		{time.Millisecond, walPassive},      // commits before the next look: PASSIVE
		{walCheckEvery / 2, walPassive},     //
		{walCheckEvery, walTruncate},        // the next look
		{walCheckEvery * 3 / 2, walPassive}, //
	} {
		if got := k.needed(t0.Add(c.after)); got != c.want {
			t.Errorf("needed(+%v) = %d, want %d", c.after, got, c.want)
		}
	}

	// The store itself, its keeper told (on the writer goroutine, which
	// owns it) that the space is short: writes go on, and once idle the
	// log is empty.
	ctx := context.Background()
	if err := s.write(ctx, func(*wtx) error { s.wal.budget = free; return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := s.CreateTask(ctx, scope, newTask(fmt.Sprintf("short-%03d", i), a2a.TaskState_TASK_STATE_WORKING, i), taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * walIdle)
	for {
		fi, err := os.Stat(s.wal.path)
		if err == nil && fi.Size() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the WAL %v after idle: %v, want empty", fi.Size(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkCreateShortSpace: task writes while the volume's free space is
// short (the keeper's budget set to the free space), the case where every
// commit used to run a TRUNCATE checkpoint.
func BenchmarkCreateShortSpace(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "tasks.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	_, free, ok := volumeSpace(filepath.Dir(s.wal.path))
	if !ok {
		b.Skip("the volume's free space is not known here")
	}
	ctx := context.Background()
	if err := s.write(ctx, func(*wtx) error { s.wal.budget = free; return nil }); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.CreateTask(ctx, scope, newTask(fmt.Sprintf("b-%09d", i), a2a.TaskState_TASK_STATE_WORKING, i), taskstore.Event{}); err != nil {
			b.Fatal(err)
		}
	}
}
