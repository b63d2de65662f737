package fcm

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxPending bounds what a coalescingConn holds unwritten: a request that
// would pass it waits for room (awaitRoom), so a slow peer still slows the
// senders down as TCP's own buffer would.
const maxPending = 1 << 20

// errWriteStalled is a wait for room that outlasted its deadline: the
// peer reads too slowly, or not at all.
var errWriteStalled = errors.New("fcm: the connection's writes are stalled: the server is not reading")

// coalescingConn gathers the writes of a connection's many streams into
// few system calls. The HTTP/2 client (h2Conn) flushes each request as
// it comes, its headers and body together: a system call a message
// without this. Here a Write only copies into a buffer and wakes the
// connection's writer, which first lets the goroutines ready to run
// (other streams, about to write) have their turn and then writes
// everything gathered at once. Under load one system call
// carries many messages; alone, a message waits for no timer.
//
// Write never waits: a writer that must not pass maxPending asks for
// room first (awaitRoom), with its deadline, so no wait for a peer that
// stopped reading outlasts the send that waits.
//
// A failed write is returned by every Write after it; the connection
// stays open for its reader until Close (see h2Conn.writeFailed).
type coalescingConn struct {
	net.Conn

	// size is len(pending), and broken whether err is set, for
	// awaitRoom to see without mu that there is room (almost always).
	size   atomic.Int64
	broken atomic.Bool

	mu      sync.Mutex
	drained chan struct{} // closed (and replaced) when pending is written
	pending []byte
	err     error // the first failed write, or net.ErrClosed after Close
	closing bool  // closeFlushed: close once pending is written
	wake    chan struct{}
}

func newCoalescingConn(conn net.Conn) *coalescingConn {
	c := &coalescingConn{Conn: conn, wake: make(chan struct{}, 1), drained: make(chan struct{})}
	go c.writeLoop()
	return c
}

// awaitRoom waits until n more bytes fit in maxPending (or nothing is
// pending), the connection fails, ctx ends or the deadline (zero: none)
// passes; it returns nil in the first case, errWriteStalled at the
// deadline. The timer is only made when the peer is behind.
func (c *coalescingConn) awaitRoom(ctx context.Context, deadline time.Time, n int) error {
	if size := c.size.Load(); !c.broken.Load() && (size == 0 || size+int64(n) <= maxPending) {
		return nil
	}
	var timeout <-chan time.Time
	for {
		c.mu.Lock()
		if c.err != nil || len(c.pending) == 0 || len(c.pending)+n <= maxPending {
			err := c.err
			c.mu.Unlock()
			return err
		}
		drained := c.drained
		c.mu.Unlock()
		if timeout == nil && !deadline.IsZero() {
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-drained:
		case <-timeout:
			return errWriteStalled
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// failed returns the error of the write that failed, nil while none did
// (or after Close).
func (c *coalescingConn) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(c.err, net.ErrClosed) {
		return nil
	}
	return c.err
}

// drainedLocked wakes the writers waiting for room.
func (c *coalescingConn) drainedLocked() {
	close(c.drained)
	c.drained = make(chan struct{})
}

// Write copies p to be written by the connection's writer.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.closing {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.size.Store(int64(len(c.pending)))
	select {
	case c.wake <- struct{}{}:
	default: // the writer is awake already
	}
	return len(p), nil
}

// closeFlushed closes the connection once what is pending is written, so
// the last frames (a GOAWAY) reach the peer; the write may take at most
// h2CloseTimeout. Later Writes fail with net.ErrClosed.
func (c *coalescingConn) closeFlushed() {
	c.mu.Lock()
	if c.err != nil || c.closing {
		c.mu.Unlock()
		_ = c.Conn.Close()
		return
	}
	c.closing = true
	_ = c.Conn.SetWriteDeadline(time.Now().Add(h2CloseTimeout))
	select { // under mu: fail closes wake
	case c.wake <- struct{}{}:
	default: // the writer is awake already
	}
	c.mu.Unlock()
}

// h2CloseTimeout bounds the last write of a connection closed with
// closeFlushed.
const h2CloseTimeout = time.Second

// Close ends the writer and closes the connection; what is not yet
// written is dropped, as the kernel's buffer would be on a reset.
func (c *coalescingConn) Close() error {
	c.fail(net.ErrClosed)
	return c.Conn.Close()
}

// fail records the connection's first error and wakes every waiter.
func (c *coalescingConn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		c.broken.Store(true)
		close(c.wake)
		c.drainedLocked()
	}
}

// writeLoop writes what Write gathers until the connection fails or
// closes.
func (c *coalescingConn) writeLoop() {
	var out []byte
	for range c.wake {
		runtime.Gosched() // let the streams ready to write do so first
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			return
		}
		out, c.pending = c.pending, out[:0]
		c.size.Store(0)
		closing := c.closing
		c.mu.Unlock()
		if _, err := c.Conn.Write(out); err != nil {
			// The connection stays open for its reader, what the peer
			// wrote before it went away still to be read, unless it is
			// closing (closeFlushed may have come during the write).
			c.fail(err)
			c.mu.Lock()
			closing = c.closing
			c.mu.Unlock()
			if closing {
				_ = c.Conn.Close()
			}
			return
		}
		if closing {
			_ = c.Close()
			return
		}
		c.mu.Lock()
		if c.err == nil {
			c.drainedLocked()
		}
		c.mu.Unlock()
	}
}
