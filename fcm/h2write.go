package fcm

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The write side of an h2Conn: a request's frames, resets, and what a
// failed write leaves to the reader. Nothing waits holding wmu: a Write
// to the coalescingConn never blocks, and a send waits for room in it
// (awaitRoom, until its deadline) before it takes wmu, so no send waits
// for wmu long whatever the server does.

// h2HeaderRoom is the room a request's header block is given when it
// waits for room to write (awaitRoom): more than one ever takes.
const h2HeaderRoom = 4 << 10

// unsent gives up the stream reserved for s before anything of its
// request was written, for err: the request did not reach the server.
// A connection whose writes stalled past a deadline is retired, so that
// the send, tried again, goes elsewhere.
func (c *h2Conn) unsent(err error) error {
	c.mu.Lock()
	c.reserved--
	stalled := errors.Is(err, errWriteStalled)
	if stalled {
		c.retired = true
	}
	drained := c.drainedLocked()
	c.mu.Unlock()
	if stalled {
		c.pool.remove(c)
	}
	if werr := c.nc.failed(); werr != nil {
		c.writeFailed(werr) // the next sends go elsewhere at once
	}
	if drained {
		c.close(errConnDrained)
	}
	return fmt.Errorf("%w: not sent: %w", errUnprocessed, err)
}

// writeRequest opens s with the next stream id and writes the request's
// HEADERS and DATA, waiting for send window when the body needs more
// (until s ends: tick ends it when its caller's ctx ends or its deadline
// passes). No wait outlasts s's: room to write is waited for until its
// deadline, wmu is never held long, and a request whose wait is over
// before its HEADERS are written is not written. It returns an error only
// when s was never opened (errUnprocessed); the other failures end s,
// for roundTrip to read.
func (c *h2Conn) writeRequest(s *h2Stream, path, authorization string, body []byte) error {
	// Room is not promised: the sends that find it at once may together
	// pass maxPending by a request each, a bound all the same.
	if err := c.nc.awaitRoom(s.ctx, s.deadline, h2HeaderRoom+len(body)); err != nil {
		return c.unsent(err)
	}
	// The last check before the request is written: wmu is held by others
	// only while they write, a few microseconds.
	if err := s.waitOver(time.Now()); err != nil {
		return c.unsent(err)
	}
	c.wmu.Lock()
	c.mu.Lock()
	c.reserved--
	if c.err != nil || c.goAway {
		err := c.err
		if err == nil {
			err = errors.New("the server sent GOAWAY")
		}
		drained := c.drainedLocked()
		c.mu.Unlock()
		c.wmu.Unlock()
		if drained {
			c.close(errConnDrained)
		}
		return fmt.Errorf("%w: %v", errUnprocessed, err)
	}
	s.id = c.nextID
	c.nextID += 2
	if c.nextID > c.maxStreamID {
		c.retired = true
	}
	s.sendWindow = c.peerWindow
	s.endSent = len(body) == 0
	c.streams[s.id] = s
	if !c.watching {
		c.watching = true
		c.timer.Reset(h2Watch)
	}
	maxFrame := int(c.peerFrame)
	c.mu.Unlock()

	c.hbuf.Reset()
	c.writeField(":method", "POST")
	c.writeField(":scheme", c.pool.scheme)
	c.writeField(":authority", c.pool.authority)
	c.writeField(":path", path)
	c.writeField("content-type", "application/json")
	c.writeField("content-length", strconv.Itoa(len(body)))
	c.writeField("authorization", authorization)
	block := c.hbuf.Bytes()
	for first := true; first || len(block) > 0; first = false {
		frag := block[:min(len(block), maxFrame)]
		block = block[len(frag):]
		if first {
			_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: frag,
				EndStream: len(body) == 0, EndHeaders: len(block) == 0})
		} else {
			_ = c.fr.WriteContinuation(s.id, len(block) == 0, frag)
		}
	}
	rest := body
	for {
		rest = c.writeData(s, rest)
		err := c.bw.Flush()
		c.wmu.Unlock()
		if err != nil {
			c.writeFailed(err) // the reader ends s, answered or not
			return nil
		}
		if len(rest) == 0 {
			return nil
		}
		c.awaitWindow(s)
		// The rest waits for room as the start did; when s's wait is
		// over, tick ends and resets it.
		if c.nc.awaitRoom(s.ctx, s.deadline, len(rest)) != nil {
			return nil
		}
		c.wmu.Lock()
	}
}

// writeField adds one header field to the block being encoded (wmu held).
func (c *h2Conn) writeField(name, value string) {
	_ = c.henc.WriteField(hpack.HeaderField{Name: name, Value: value})
}

// writeData writes as much of rest on s as the send windows allow (wmu
// held) and returns what is left. Nothing is left once s has ended.
func (c *h2Conn) writeData(s *h2Stream, rest []byte) []byte {
	for len(rest) > 0 {
		c.mu.Lock()
		if c.streams[s.id] != s || c.err != nil {
			c.mu.Unlock()
			return nil // reset, or the connection closed
		}
		n := int(min(int64(len(rest)), int64(c.peerFrame), c.sendWindow, s.sendWindow))
		if n <= 0 {
			c.mu.Unlock()
			return rest
		}
		c.sendWindow -= int64(n)
		s.sendWindow -= int64(n)
		s.endSent = n == len(rest)
		c.mu.Unlock()
		_ = c.fr.WriteData(s.id, n == len(rest), rest[:n])
		rest = rest[n:]
	}
	return rest
}

// awaitWindow waits until a send window grows or s ends.
func (c *h2Conn) awaitWindow(s *h2Stream) {
	c.mu.Lock()
	if c.streams[s.id] != s || c.err != nil || (c.sendWindow > 0 && s.sendWindow > 0) {
		c.mu.Unlock()
		return
	}
	if c.windowCh == nil {
		c.windowCh = make(chan struct{})
	}
	ch := c.windowCh
	c.mu.Unlock()
	select {
	case <-ch:
	case <-s.done:
	}
}

// writeReset sends RST_STREAM for id.
func (c *h2Conn) writeReset(id uint32, code http2.ErrCode) {
	c.write(func() error { return c.fr.WriteRSTStream(id, code) })
}

// resetStream ends s with err (nil: its answer is complete), unless it
// ended already, and sends RST_STREAM with code. The stream's slot stays
// taken (resetting) until the reset is written: the server counts the
// stream open until then, and a new stream opened first would be over
// its limit.
func (c *h2Conn) resetStream(s *h2Stream, code http2.ErrCode, err error) {
	c.mu.Lock()
	if c.streams[s.id] != s {
		c.mu.Unlock()
		return
	}
	c.forgetLocked(s.id)
	c.resetting++
	c.mu.Unlock()
	s.err = err
	close(s.done)
	c.writeReset(s.id, code)
	c.resetWritten(1)
}

// resetWritten frees the slots of n streams whose resets are written.
func (c *h2Conn) resetWritten(n int) {
	c.mu.Lock()
	c.resetting -= n
	drained := c.drainedLocked()
	c.mu.Unlock()
	if drained {
		c.close(errConnDrained)
	}
}

// write runs one frame write under wmu and flushes it; a failure gives
// the connection up (writeFailed). The frames it writes are small: they
// do not wait for room.
func (c *h2Conn) write(frame func() error) {
	c.wmu.Lock()
	err := frame()
	if err == nil {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		c.writeFailed(err)
	}
}

// writeFailed gives up writing on c after err: it takes no new stream,
// and its reader reads on, for at most h2DrainTimeout, what the server
// wrote before it went away (often answers to the requests it processed
// before it reset the connection), then closes it. Only the streams
// still unanswered then fail; closing at once would fail them all, and
// their senders would send again what FCM answered.
func (c *h2Conn) writeFailed(err error) {
	c.mu.Lock()
	if c.err != nil || c.writeErr != nil {
		c.mu.Unlock()
		return
	}
	c.writeErr = fmt.Errorf("fcm: write: %w", err)
	c.retired = true
	c.windowGrewLocked() // the writers waiting for window give up
	c.mu.Unlock()
	c.pool.remove(c)
	_ = c.nc.Conn.SetReadDeadline(time.Now().Add(h2DrainTimeout))
}
