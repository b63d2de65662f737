package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockGrace is how long LockDir waits for a holder to let go. A lock is
// held for an instant after its owner closes it wherever the process has
// just forked a child: the child's copy of the descriptor keeps the lock
// until it execs (close-on-exec). A process that is really running keeps
// it, and the start is refused after the grace.
const lockGrace = 2 * time.Second

// LockDir takes an exclusive lock on the data directory, so that a second
// process cannot open the same embedded database. The lock is held until
// the returned file is closed (or the process dies).
func LockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockGrace)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("data directory %s is in use by another herald process", dir)
			}
			return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
