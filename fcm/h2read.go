package fcm

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/net/http2"
)

// readLoop handles the connection's frames until it fails or closes.
func (c *h2Conn) readLoop() {
	c.close(c.readFrames())
	c.failStreams()
}

// readFrames reads and handles frames; it returns why the connection can
// be read no more.
func (c *h2Conn) readFrames() error {
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				if s := c.stream(se.StreamID); s != nil {
					c.resetStream(s, se.Code, fmt.Errorf("fcm: malformed answer: %w", se))
				} else {
					c.writeReset(se.StreamID, se.Code)
				}
				continue
			}
			return fmt.Errorf("fcm: read: %w", err)
		}
		c.lastFrame.Store(time.Now().UnixNano())
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			c.onHeaders(f)
		case *http2.DataFrame:
			c.onData(f)
		case *http2.RSTStreamFrame:
			c.onReset(f)
		case *http2.SettingsFrame:
			err = c.onSettings(f)
		case *http2.WindowUpdateFrame:
			err = c.onWindowUpdate(f)
		case *http2.PingFrame:
			c.onPing(f)
		case *http2.GoAwayFrame:
			c.onGoAway(f)
		case *http2.PushPromiseFrame:
			err = fmt.Errorf("fcm: the server pushed though push is disabled: %w", http2.ConnectionError(http2.ErrCodeProtocol))
		}
		if err != nil {
			return err
		}
	}
}

// onHeaders reads an answer's status and Retry-After; trailers are
// checked and ignored. END_STREAM ends the stream. A malformed answer
// (RFC 9113 8.1, 8.3.2) fails the send and resets the stream.
func (c *h2Conn) onHeaders(f *http2.MetaHeadersFrame) {
	s := c.stream(f.StreamID)
	if s == nil {
		return
	}
	if s.resp.status != 0 { // trailers
		switch {
		case len(f.PseudoFields()) > 0:
			c.malformed(s, "a pseudo-header in the trailers")
			return
		case !f.StreamEnded():
			c.malformed(s, "trailers that do not end the stream")
			return
		}
		c.answered(s)
		return
	}
	if f.Truncated {
		c.resetStream(s, http2.ErrCodeProtocol, errors.New("fcm: answer's header list too large"))
		return
	}
	status, ok := statusOf(f.PseudoValue("status"))
	switch {
	case !ok:
		c.malformed(s, fmt.Sprintf("status %q", f.PseudoValue("status")))
		return
	case status < 200 && f.StreamEnded():
		c.malformed(s, fmt.Sprintf("informational status %d that ends the stream", status))
		return
	case status < 200:
		return // informational; the answer follows
	}
	s.resp.status = status
	for _, hf := range f.RegularFields() {
		if hf.Name == "retry-after" {
			s.resp.retryAfter = hf.Value
			break
		}
	}
	if f.StreamEnded() {
		c.answered(s)
	}
}

// malformed fails s for a malformed answer (what) and resets its stream
// with PROTOCOL_ERROR.
func (c *h2Conn) malformed(s *h2Stream, what string) {
	c.resetStream(s, http2.ErrCodeProtocol, fmt.Errorf("fcm: malformed answer: %s", what))
}

// onData keeps up to maxErrorBody of a failure's body (a success's is
// only counted) and credits the connection's window back. A stream that
// sent maxErrorBody is ended and reset: more is not read, as post never
// read more.
func (c *h2Conn) onData(f *http2.DataFrame) {
	// Padding counts against flow control too.
	if c.unacked += f.Length; c.unacked >= h2ConnRefill {
		n := c.unacked
		c.unacked = 0
		c.write(func() error { return c.fr.WriteWindowUpdate(0, n) })
	}
	s := c.stream(f.StreamID)
	if s == nil {
		return
	}
	if s.resp.status == 0 {
		c.resetStream(s, http2.ErrCodeProtocol, errors.New("fcm: answer body before its headers"))
		return
	}
	data := f.Data()
	if s.resp.status >= 300 || s.resp.status < 200 {
		if room := maxErrorBody - len(s.resp.body); room > 0 {
			s.resp.body = append(s.resp.body, data[:min(len(data), room)]...)
		}
	}
	s.received += len(data)
	switch {
	case f.StreamEnded():
		c.answered(s)
	case s.received >= maxErrorBody:
		c.resetStream(s, http2.ErrCodeCancel, nil)
	}
}

// onReset ends a stream the server reset. REFUSED_STREAM means the server
// did not process it, so it may be sent again.
func (c *h2Conn) onReset(f *http2.RSTStreamFrame) {
	s := c.stream(f.StreamID)
	if s == nil {
		return
	}
	if f.ErrCode == http2.ErrCodeRefusedStream {
		c.finish(s, fmt.Errorf("%w: stream refused", errUnprocessed))
		return
	}
	c.finish(s, fmt.Errorf("fcm: stream reset by the server: %v", f.ErrCode))
}

// onSettings applies the server's SETTINGS and acknowledges them.
func (c *h2Conn) onSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.maxStreams = s.Val
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.peerWindow
			for _, st := range c.streams {
				if st.sendWindow+delta > h2MaxWindow {
					return fmt.Errorf("fcm: SETTINGS_INITIAL_WINDOW_SIZE overflows a stream's window: %w", http2.ConnectionError(http2.ErrCodeFlowControl))
				}
				st.sendWindow += delta
			}
			c.peerWindow = int64(s.Val)
			if delta > 0 {
				c.windowGrewLocked()
			}
		case http2.SettingMaxFrameSize:
			c.peerFrame = s.Val
		case http2.SettingHeaderTableSize:
			c.henc.SetMaxDynamicTableSizeLimit(s.Val) // wmu is held
		}
		return nil
	})
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("fcm: server SETTINGS: %w (%w)", err, http2.ConnectionError(http2.ErrCodeProtocol))
	}
	if err := c.fr.WriteSettingsAck(); err != nil {
		return err
	}
	return c.bw.Flush()
}

// onWindowUpdate grows a send window and wakes the writers waiting for it.
func (c *h2Conn) onWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		if c.sendWindow+inc > h2MaxWindow {
			return fmt.Errorf("fcm: WINDOW_UPDATE overflows the connection's window: %w", http2.ConnectionError(http2.ErrCodeFlowControl))
		}
		c.sendWindow += inc
	} else if s := c.streams[f.StreamID]; s != nil {
		// A stream's overflow would be the server's bug; cap it rather
		// than fail a request FCM may have processed.
		s.sendWindow = min(s.sendWindow+inc, h2MaxWindow)
	}
	c.windowGrewLocked()
	return nil
}

// onPing answers the server's PING; an ack clears ours.
func (c *h2Conn) onPing(f *http2.PingFrame) {
	if f.IsAck() {
		c.mu.Lock()
		c.pingPending = false
		c.mu.Unlock()
		return
	}
	data := f.Data
	c.write(func() error { return c.fr.WritePing(true, data) })
}

// onGoAway retires the connection: the streams above the last one the
// server processes are ended as unprocessed (sent again on another
// connection), the others finish; the connection closes when none is
// left.
func (c *h2Conn) onGoAway(f *http2.GoAwayFrame) {
	c.mu.Lock()
	c.retired, c.goAway = true, true
	var unprocessed []*h2Stream
	for id, s := range c.streams {
		if id > f.LastStreamID {
			unprocessed = append(unprocessed, s)
		}
	}
	c.mu.Unlock()
	c.pool.remove(c)
	err := fmt.Errorf("%w: above the server's GOAWAY (%v)", errUnprocessed, f.ErrCode)
	for _, s := range unprocessed {
		c.finish(s, err)
	}
	c.mu.Lock()
	drained := c.drainedLocked()
	c.mu.Unlock()
	if drained {
		c.close(errConnDrained)
	}
}
