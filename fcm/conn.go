package fcm

import (
	"net"
	"runtime"
	"sync"
)

// maxPending bounds what a coalescingConn holds unwritten: a Write that
// would pass it waits, so a slow peer still slows the senders down as TCP's
// own buffer would.
const maxPending = 1 << 20

// coalescingConn gathers the writes of a connection's many streams into
// few system calls. The HTTP/2 client (h2Conn) flushes each request as
// it comes, its headers and body together: a system call a message
// without this. Here a Write only copies into a buffer and wakes the
// connection's writer, which first lets the goroutines ready to run
// (other streams, about to write) have their turn and then writes
// everything gathered at once. Under load one system call
// carries many messages; alone, a message waits for no timer.
//
// A failed write is returned by every Write after it and closes the
// connection, so its reader fails too and the client ends the streams on
// it (retried by the caller, as any broken connection).
type coalescingConn struct {
	net.Conn

	mu      sync.Mutex
	drained sync.Cond // signalled when pending is written
	pending []byte
	err     error // the first failed write, or net.ErrClosed after Close
	wake    chan struct{}
}

func newCoalescingConn(conn net.Conn) *coalescingConn {
	c := &coalescingConn{Conn: conn, wake: make(chan struct{}, 1)}
	c.drained.L = &c.mu
	go c.writeLoop()
	return c
}

// Write copies p to be written by the connection's writer.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && len(c.pending) > 0 && len(c.pending)+len(p) > maxPending {
		c.drained.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	c.pending = append(c.pending, p...)
	select {
	case c.wake <- struct{}{}:
	default: // the writer is awake already
	}
	return len(p), nil
}

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
		close(c.wake)
	}
	c.drained.Broadcast()
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
		c.mu.Unlock()
		if _, err := c.Conn.Write(out); err != nil {
			c.fail(err)
			_ = c.Conn.Close()
			return
		}
		c.mu.Lock()
		c.drained.Broadcast()
		c.mu.Unlock()
	}
}
