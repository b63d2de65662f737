package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdLock takes the data dir's lock through an open file of its own, as
// another process (or a forked child that has not exec'd yet) holds it.
func holdLock(t *testing.T, dir string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLockDirWaitsForABriefHolder: a lock released an instant after the
// start asks for it is taken. The interleaving is the one CI met: a node
// stops and closes its lock while another goroutine of the process forks
// a child, whose copy of the descriptor holds the lock until it execs;
// the next start in the same process then found the dir "in use".
func TestLockDirWaitsForABriefHolder(t *testing.T) {
	dir := t.TempDir()
	other := holdLock(t, dir)
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		other.Close()
		close(released)
	}()
	lock, err := LockDir(dir)
	<-released
	if err != nil {
		t.Fatalf("LockDir with a holder gone after 100 ms: %v", err)
	}
	lock.Close()
}

// TestLockDirRefusesAHolder: a lock another process keeps is refused,
// naming the dir.
func TestLockDirRefusesAHolder(t *testing.T) {
	dir := t.TempDir()
	other := holdLock(t, dir)
	defer other.Close()
	lock, err := LockDir(dir)
	if err == nil {
		lock.Close()
		t.Fatal("LockDir took a lock another holder keeps")
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "in use by another herald process") {
		t.Fatalf("got %v, want the dir named as in use", err)
	}
}
