package fcm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	// h2StreamWindow is the receive window each stream is given: far more
	// than the maxErrorBody a stream keeps before it is reset, so no
	// stream ever needs a WINDOW_UPDATE.
	h2StreamWindow = 1 << 20
	// h2ConnWindow is the connection's receive window, credited back each
	// time h2ConnRefill of it was used, so the connection never stalls.
	h2ConnWindow = 1 << 30
	h2ConnRefill = 4 << 20
	// h2MaxReadFrame is the largest frame the client reads: the
	// SETTINGS_MAX_FRAME_SIZE it leaves at its default.
	h2MaxReadFrame = 16384
	// h2MaxHeaderList bounds the answer's decoded header list.
	h2MaxHeaderList = 64 << 10
	// h2DefaultMaxStreams is the streams a connection takes when the
	// peer's SETTINGS do not say how many it allows.
	h2DefaultMaxStreams = 100
	// h2MaxStreamID is the last stream id a client may open.
	h2MaxStreamID = math.MaxInt32
	// h2MaxWindow is the largest flow-control window (RFC 9113 6.9.1).
	h2MaxWindow = math.MaxInt32
	// h2Watch is how often a connection with open streams looks for those
	// whose caller's ctx ended or whose deadline passed (see expireLocked):
	// how late, at most, such a stream is ended.
	h2Watch = 50 * time.Millisecond
	// h2DrainTimeout bounds how long a connection whose writes failed is
	// read for the answers already on their way (see writeFailed).
	h2DrainTimeout = 2 * time.Second
)

// Why a connection closed, when nothing failed.
var (
	errConnIdle    = errors.New("fcm: connection idle")
	errConnDrained = errors.New("fcm: connection drained after GOAWAY or its last stream id")
	errPingTimeout = errors.New("fcm: connection dead: no PING ack")
)

// h2Conn is one HTTP/2 connection of an h2Pool. The callers' goroutines
// write their own requests under wmu; the reader goroutine (readLoop)
// handles every frame that arrives and ends streams by closing their done
// channel. Lock order: the pool's mu, then wmu, then mu; nothing waits
// with mu or wmu held.
type h2Conn struct {
	pool *h2Pool
	nc   *coalescingConn

	// wmu serializes the writes: the Framer's write side, the HPACK
	// encoder and bw, so header blocks are encoded and sent in stream-id
	// order. A request's frames are buffered and flushed at once; a
	// flush never waits (coalescingConn), a send waits for room before
	// it takes wmu (awaitRoom).
	wmu  sync.Mutex
	bw   *bufio.Writer
	fr   *http2.Framer
	henc *hpack.Encoder
	hbuf bytes.Buffer

	lastFrame atomic.Int64 // UnixNano of the last frame read
	unacked   uint32       // DATA received and not yet credited back (reader only)
	timer     *time.Timer  // runs tick: PINGs, the idle close, and ending streams whose wait is over

	mu          sync.Mutex
	streams     map[uint32]*h2Stream // open streams
	reserved    int                  // streams promised by reserve, not yet opened
	resetting   int                  // streams ended whose RST_STREAM is not yet written: they hold their slot
	nextID      uint32
	maxStreamID uint32 // the last id this connection opens
	maxStreams  uint32 // the peer's SETTINGS_MAX_CONCURRENT_STREAMS
	peerWindow  int64  // the peer's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame   uint32 // the peer's SETTINGS_MAX_FRAME_SIZE
	sendWindow  int64  // the connection's send window
	windowCh    chan struct{}
	retired     bool // takes no new stream (GOAWAY, ids used up, idle)
	goAway      bool
	pingPending bool
	pingAt      time.Time
	idleSince   time.Time
	watching    bool  // the timer is set within h2Watch, for the open streams
	writeErr    error // why writes failed (the reader drains what is left); nil while they work
	err         error // why the connection closed; nil while open
}

// h2Stream is one request in flight. The reader fills resp and err, then
// closes done; the caller reads them after done. When the caller's ctx
// ends or the deadline passes first, tick ends the stream instead
// (expired: err is why, and resp, which the reader may still be filling,
// is not read).
type h2Stream struct {
	id         uint32
	sendWindow int64 // under the connection's mu
	done       chan struct{}
	resp       response
	received   int // bytes of body received
	err        error
	ctx        context.Context
	deadline   time.Time // zero: none
	expired    bool
	endSent    bool // END_STREAM was written (under the connection's mu)
}

// startH2Conn sends the client preface and our SETTINGS on nc and starts
// the connection's reader.
func startH2Conn(p *h2Pool, nc *coalescingConn) (*h2Conn, error) {
	now := time.Now()
	c := &h2Conn{
		pool:        p,
		nc:          nc,
		bw:          bufio.NewWriterSize(nc, 16<<10),
		streams:     make(map[uint32]*h2Stream),
		nextID:      1,
		maxStreamID: p.maxStreamID,
		maxStreams:  h2DefaultMaxStreams,
		peerWindow:  65535,
		peerFrame:   16384,
		sendWindow:  65535,
		idleSince:   now,
	}
	c.fr = http2.NewFramer(c.bw, bufio.NewReaderSize(nc, 16<<10))
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = h2MaxHeaderList
	// The client advertises no SETTINGS_MAX_FRAME_SIZE: the default, 16,384
	// bytes, is the most it takes (RFC 9113 4.2).
	c.fr.SetMaxReadFrameSize(h2MaxReadFrame)
	c.fr.SetReuseFrames()
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.lastFrame.Store(now.UnixNano())

	_, _ = c.bw.WriteString(http2.ClientPreface)
	_ = c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: h2MaxHeaderList},
	)
	_ = c.fr.WriteWindowUpdate(0, h2ConnWindow-65535)
	if err := c.bw.Flush(); err != nil {
		_ = nc.Close()
		return nil, err
	}
	if err := c.readPeerSettings(); err != nil {
		_ = nc.Close()
		return nil, err
	}
	c.mu.Lock()
	c.timer = time.AfterFunc(min(p.pingAfter, p.idleTimeout), c.tick)
	c.mu.Unlock()
	go c.readLoop()
	return c, nil
}

// readPeerSettings reads the server's first frame, its SETTINGS, and
// applies them before the connection takes a stream: streams opened on a
// guess of the server's limit would be refused, and sent again on a
// connection that guesses the same.
func (c *h2Conn) readPeerSettings() error {
	if err := c.nc.SetReadDeadline(time.Now().Add(h2DialTimeout)); err != nil {
		return err
	}
	f, err := c.fr.ReadFrame()
	if err != nil {
		return err
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return fmt.Errorf("fcm: the server's first frame is %v, not SETTINGS", f.Header())
	}
	if err := c.onSettings(sf); err != nil {
		return err
	}
	return c.nc.SetReadDeadline(time.Time{})
}

// reserve promises the caller a stream on c, if c takes one more.
func (c *h2Conn) reserve() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retired || c.err != nil || uint64(len(c.streams)+c.reserved+c.resetting) >= uint64(c.maxStreams) {
		return false
	}
	if uint64(c.nextID)+2*uint64(c.reserved) > uint64(c.maxStreamID) {
		return false
	}
	c.reserved++
	return true
}

// retireIfIdle retires c when it carries no stream; the pool's mu is held,
// so no reserve can race with it.
func (c *h2Conn) retireIfIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || len(c.streams) > 0 || c.reserved > 0 || c.resetting > 0 {
		return false
	}
	c.retired = true
	return true
}

// drainedLocked reports whether c is retired and carries nothing more, so
// it can be closed.
func (c *h2Conn) drainedLocked() bool {
	return c.retired && c.err == nil && len(c.streams) == 0 && c.reserved == 0 && c.resetting == 0
}

// roundTrip sends one request on the stream reserved by reserve and waits
// for its answer, ctx's end or the deadline (zero: none), whichever comes
// first; tick watches the last two (expireLocked), so that a send does
// not register with ctx or start a timer of its own.
func (c *h2Conn) roundTrip(ctx context.Context, deadline time.Time, path, authorization string, body []byte) (response, error) {
	s := &h2Stream{done: make(chan struct{}), ctx: ctx, deadline: deadline}
	if err := c.writeRequest(s, path, authorization, body); err != nil {
		return response{}, err
	}
	<-s.done
	if s.expired {
		return response{}, s.err
	}
	return s.resp, s.err
}

// waitOver returns why s's wait is over (its ctx's error, or
// context.DeadlineExceeded), or nil while it is not.
func (s *h2Stream) waitOver(now time.Time) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if !s.deadline.IsZero() && !now.Before(s.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// windowGrewLocked wakes the writers waiting for send window.
func (c *h2Conn) windowGrewLocked() {
	if c.windowCh != nil {
		close(c.windowCh)
		c.windowCh = nil
	}
}

// forgetLocked drops stream id from the open streams.
func (c *h2Conn) forgetLocked(id uint32) {
	delete(c.streams, id)
	if len(c.streams) == 0 {
		c.idleSince = time.Now()
	}
}

// finish ends s with err (nil: its answer is complete), unless it ended
// already.
func (c *h2Conn) finish(s *h2Stream, err error) {
	c.mu.Lock()
	if c.streams[s.id] != s {
		c.mu.Unlock()
		return
	}
	c.forgetLocked(s.id)
	drained := c.drainedLocked()
	c.mu.Unlock()
	s.err = err
	close(s.done)
	if drained {
		c.close(errConnDrained)
	}
}

// answered ends s, whose answer is complete. A request whose END_STREAM
// was not written (the server answered before the body's end) is reset
// with NO_ERROR (RFC 9113 8.1), or its stream would stay half-closed at
// the server, holding one of its slots.
func (c *h2Conn) answered(s *h2Stream) {
	c.mu.Lock()
	if c.streams[s.id] != s {
		c.mu.Unlock()
		return
	}
	c.forgetLocked(s.id)
	early := !s.endSent // the writer writes no more once s is forgotten
	if early {
		c.resetting++
	}
	drained := c.drainedLocked()
	c.mu.Unlock()
	close(s.done)
	if early {
		c.writeReset(s.id, http2.ErrCodeNo)
		c.resetWritten(1)
	} else if drained {
		c.close(errConnDrained)
	}
}

// stream returns the open stream id, or nil (never opened, or forgotten:
// its late frames are dropped).
func (c *h2Conn) stream(id uint32) *h2Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[id]
}

// close closes the connection for err and drops c from the pool. The
// reader, failing to read, then ends every open stream (failStreams): it
// alone writes a stream's answer, so none is ended while it fills one.
// A peer that can still read is told why first, with GOAWAY (goAwayCode).
func (c *h2Conn) close(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.retired = true
	c.windowGrewLocked()
	timer := c.timer
	code, tell := goAwayCode(err)
	tell = tell && c.writeErr == nil
	c.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if tell && c.wmu.TryLock() { // held: a writer is mid-frame, and no GOAWAY can follow at once
		// The last stream id the server opened: none, push being off.
		_ = c.fr.WriteGoAway(0, code, nil)
		_ = c.bw.Flush()
		c.wmu.Unlock()
		c.nc.closeFlushed()
	} else {
		_ = c.nc.Close()
	}
	c.pool.remove(c)
}

// goAwayCode is the error code of the GOAWAY a connection closed for err
// sends first, and whether it sends one: none to a peer that went away
// or stopped answering.
func goAwayCode(err error) (http2.ErrCode, bool) {
	var ce http2.ConnectionError
	switch {
	case errors.Is(err, errConnIdle), errors.Is(err, errConnDrained):
		return http2.ErrCodeNo, true
	case errors.Is(err, http2.ErrFrameTooLarge):
		return http2.ErrCodeFrameSize, true
	case errors.As(err, &ce):
		return http2.ErrCode(ce), true
	}
	return 0, false
}

// failStreams ends the streams still open when the reader stops, with the
// connection's error (retriable for the callers).
func (c *h2Conn) failStreams() {
	c.mu.Lock()
	streams, reason := c.streams, c.err
	if c.writeErr != nil {
		reason = fmt.Errorf("%w, then %w", c.writeErr, reason)
	}
	c.streams = nil
	c.mu.Unlock()
	for _, s := range streams {
		s.err = fmt.Errorf("fcm: connection lost: %w", reason)
		close(s.done)
	}
}

// tick ends the streams whose wait is over (expireLocked), sends a PING
// when a connection with open streams was silent for pingAfter, closes it
// when the ack takes longer than pingTimeout, and closes it after
// idleTimeout without a stream; then it sets its timer for the next of
// these moments, within h2Watch while streams are open.
func (c *h2Conn) tick() {
	p := c.pool
	now := time.Now()
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	expired, timedOut := c.expireLocked(now)
	c.resetting += len(expired)
	if timedOut {
		// A server that leaves a stream unanswered past its deadline may
		// have stopped reading: the send, tried again, goes elsewhere.
		c.retired = true
	}
	c.watching = len(c.streams) > 0
	var next time.Duration
	var ping, dead, idle bool
	switch {
	case c.pingPending:
		if waited := now.Sub(c.pingAt); waited >= p.pingTimeout {
			dead = true
		} else {
			next = p.pingTimeout - waited
		}
	case len(c.streams) > 0 || c.reserved > 0:
		if silent := now.Sub(time.Unix(0, c.lastFrame.Load())); silent >= p.pingAfter {
			ping, c.pingPending, c.pingAt = true, true, now
			next = p.pingTimeout
		} else {
			next = p.pingAfter - silent
		}
	default:
		if idleFor := now.Sub(c.idleSince); idleFor >= p.idleTimeout {
			idle = true
		} else {
			next = p.idleTimeout - idleFor
		}
	}
	if c.watching {
		next = min(cmp.Or(next, h2Watch), h2Watch)
	}
	if next > 0 {
		// At most idleTimeout away, so a connection that falls idle is
		// closed on time whatever the timer was last set for.
		c.timer.Reset(min(next, p.idleTimeout))
	}
	c.mu.Unlock()
	if timedOut {
		p.remove(c)
	}
	for _, s := range expired {
		close(s.done)
	}
	for _, s := range expired {
		c.writeReset(s.id, http2.ErrCodeCancel)
	}
	if len(expired) > 0 {
		c.resetWritten(len(expired))
	}
	switch {
	case dead:
		c.close(errPingTimeout)
	case ping:
		c.write(func() error { return c.fr.WritePing(false, [8]byte{'h', 'e', 'r', 'a', 'l', 'd'}) })
	case idle:
		p.mu.Lock()
		retired := c.retireIfIdle()
		if retired {
			p.mu.Unlock()
			c.close(errConnIdle)
			return
		}
		p.mu.Unlock()
		c.mu.Lock()
		if c.err == nil && !c.watching { // a stream opened meanwhile set it within h2Watch
			c.timer.Reset(min(p.pingAfter, p.idleTimeout))
		}
		c.mu.Unlock()
	}
}

// expireLocked ends the open streams whose caller's ctx ended or whose
// deadline passed: it forgets them, so the reader drops their late
// frames, and records why (ctx's error, or context.DeadlineExceeded). It
// returns them for the caller to close their done and reset them once mu
// is released, and whether any timed out (not merely cancelled).
func (c *h2Conn) expireLocked(now time.Time) (out []*h2Stream, timedOut bool) {
	for id, s := range c.streams {
		if err := s.waitOver(now); err != nil {
			s.err, s.expired = err, true
			c.forgetLocked(id)
			out = append(out, s)
			timedOut = timedOut || errors.Is(err, context.DeadlineExceeded)
		}
	}
	return out, timedOut
}
