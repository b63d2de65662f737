package fcm

import (
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Answers and frames RFC 9113 has a client refuse, and the GOAWAY it
// sends before it closes.

// writeFields writes a HEADERS frame of fields on stream id.
func (sc *rawConn) writeFields(id uint32, end bool, fields ...string) {
	sc.hbuf.Reset()
	for i := 0; i < len(fields); i += 2 {
		_ = sc.henc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	_ = sc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: sc.hbuf.Bytes(), EndStream: end, EndHeaders: true})
}

// TestH2MalformedAnswers: answers RFC 9113 (8.1, 8.3.2) calls malformed
// fail the send, as a stream error, instead of being read as answers.
func TestH2MalformedAnswers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		answer func(sc *rawConn, id uint32)
	}{
		{"StatusWithSign", func(sc *rawConn, id uint32) { sc.writeFields(id, true, ":status", "+200") }},
		{"StatusTwoDigits", func(sc *rawConn, id uint32) { sc.writeFields(id, true, ":status", "20") }},
		{"InformationalEndsStream", func(sc *rawConn, id uint32) { sc.writeFields(id, true, ":status", "103") }},
		{"PseudoHeaderInTrailers", func(sc *rawConn, id uint32) {
			sc.writeFields(id, false, ":status", "500")
			sc.writeFields(id, true, ":status", "200")
		}},
		{"TrailersWithoutEndStream", func(sc *rawConn, id uint32) {
			sc.writeFields(id, false, ":status", "500")
			sc.writeFields(id, false, "x-trailer", "1")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resets := make(chan http2.ErrCode, 1)
			s := startRaw(t, nil, func(_ int64, sc *rawConn) {
				tt.answer(sc, sc.request())
				for {
					f, err := sc.fr.ReadFrame()
					if err != nil {
						return
					}
					if rf, ok := f.(*http2.RSTStreamFrame); ok {
						resets <- rf.ErrCode
					}
				}
			})
			resp, err := postRaw(t, s.pool)
			if err == nil || !strings.Contains(err.Error(), "malformed") {
				t.Fatalf("got status %d error %v, want a malformed answer", resp.status, err)
			}
			if code := <-resets; code != http2.ErrCodeProtocol {
				t.Errorf("reset: got %v, want PROTOCOL_ERROR", code)
			}
		})
	}
}

// TestH2FrameTooLarge: a DATA frame over the 16,384 bytes the client
// allows (it advertises no larger SETTINGS_MAX_FRAME_SIZE) is a
// connection error: the send fails and the client sends GOAWAY with
// FRAME_SIZE_ERROR before it closes.
func TestH2FrameTooLarge(t *testing.T) {
	t.Parallel()
	goAway := make(chan http2.ErrCode, 1)
	s := startRaw(t, nil, func(_ int64, sc *rawConn) {
		id := sc.request()
		sc.writeFields(id, false, ":status", "500")
		_ = sc.fr.WriteData(id, true, make([]byte, 16385))
		watchGoAway(sc, goAway)
	})
	if resp, err := postRaw(t, s.pool); err == nil {
		t.Fatalf("got status %d, want an error", resp.status)
	}
	if code, ok := <-goAway; !ok || code != http2.ErrCodeFrameSize {
		t.Errorf("GOAWAY: got %v (sent: %v), want FRAME_SIZE_ERROR", code, ok)
	}
}

// watchGoAway reads until the connection ends and sends the code of the
// GOAWAY it read on ch; it closes ch when none came.
func watchGoAway(sc *rawConn, ch chan<- http2.ErrCode) {
	for {
		f, err := sc.fr.ReadFrame()
		if err != nil {
			close(ch)
			return
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			ch <- ga.ErrCode
			return
		}
	}
}

// TestH2GoAwayOnClose: a connection closed idle says so first with
// GOAWAY (NO_ERROR).
func TestH2GoAwayOnClose(t *testing.T) {
	t.Parallel()
	goAway := make(chan http2.ErrCode, 1)
	s := startRaw(t, nil, func(_ int64, sc *rawConn) {
		sc.respond(sc.request(), 200)
		watchGoAway(sc, goAway)
	})
	if resp, err := postRaw(t, s.pool); err != nil || resp.status != 200 {
		t.Fatalf("got status %d error %v, want 200", resp.status, err)
	}
	s.pool.closeIdle()
	if code, ok := <-goAway; !ok || code != http2.ErrCodeNo {
		t.Errorf("GOAWAY: got %v (sent: %v), want NO_ERROR", code, ok)
	}
}
