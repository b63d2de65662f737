package fcm

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// hostile is an HTTP/2 server speaking frame by frame on 127.0.0.1, each
// connection served by a scenario's serve. It records which requests it
// processed (processed) and whose answers reached the client (answered;
// for most scenarios, those it wrote).
type hostile struct {
	addr  string
	conns atomic.Int64

	mu        sync.Mutex
	processed map[string]int
	answered  map[string]bool
}

// startHostile serves each connection with serve after the preface, the
// server's SETTINGS (settings, then a large initial window unless
// settings set one) and a connection window of 1 GiB.
func startHostile(t *testing.T, settings []http2.Setting, serve func(n int64, hc *hconn)) *hostile {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{addr: ln.Addr().String(), processed: map[string]int{}, answered: map[string]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			n := h.conns.Add(1)
			wg.Go(func() {
				defer nc.Close()
				go func() { <-stop; _ = nc.Close() }() // frees a serve blocked in a read or write
				if _, err := io.ReadFull(nc, make([]byte, len(http2.ClientPreface))); err != nil {
					return
				}
				hc := &hconn{h: h, nc: nc, fr: http2.NewFramer(nc, nc), bodies: map[uint32][]byte{}, stop: stop}
				hc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
				hc.henc = hpack.NewEncoder(&hc.hbuf)
				all := append([]http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 1 << 20}}, settings...)
				if hc.fr.WriteSettings(all...) != nil || hc.fr.WriteWindowUpdate(0, 1<<30-65535) != nil {
					return
				}
				serve(n, hc)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		close(stop)
		wg.Wait()
	})
	return h
}

// hconn is the server side of one connection.
type hconn struct {
	h      *hostile
	nc     net.Conn
	fr     *http2.Framer
	henc   *hpack.Encoder
	hbuf   bytes.Buffer
	bodies map[uint32][]byte // of the requests not yet complete
	stop   chan struct{}     // closed when the test ends
	// onFrame, when set, sees every frame next reads.
	onFrame func(http2.Frame)
}

// next reads frames until a request is complete and returns its stream
// and the id its body starts with; ok is false when the connection ended.
// It acknowledges SETTINGS and answers PINGs on the way.
func (hc *hconn) next() (stream uint32, id string, ok bool) {
	for {
		f, err := hc.fr.ReadFrame()
		if err != nil {
			return 0, "", false
		}
		if hc.onFrame != nil {
			hc.onFrame(f)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = hc.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = hc.fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			hc.bodies[f.StreamID] = []byte{}
			if f.StreamEnded() {
				return f.StreamID, "", true
			}
		case *http2.DataFrame:
			b, open := hc.bodies[f.StreamID]
			if !open {
				continue
			}
			b = append(b, f.Data()...)
			hc.bodies[f.StreamID] = b
			if f.StreamEnded() {
				delete(hc.bodies, f.StreamID)
				id, _, _ := bytes.Cut(b, []byte(":"))
				return f.StreamID, string(id), true
			}
		}
	}
}

// answer processes request id and answers its stream 200.
func (hc *hconn) answer(stream uint32, id string) {
	hc.process(stream, id)
	hc.h.delivered(id)
}

// process processes request id and writes a 200 answer on its stream,
// not yet known to be delivered.
func (hc *hconn) process(stream uint32, id string) {
	hc.h.mu.Lock()
	hc.h.processed[id]++
	hc.h.mu.Unlock()
	hc.write200(stream)
}

// delivered records that the answers to ids reached the client.
func (h *hostile) delivered(ids ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		h.answered[id] = true
	}
}

// write200 writes a 200 answer without a body on stream.
func (hc *hconn) write200(stream uint32) {
	hc.hbuf.Reset()
	_ = hc.henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: hc.hbuf.Bytes(), EndStream: true, EndHeaders: true})
}

// drain reads until the connection ends, answering nothing.
func (hc *hconn) drain() {
	for {
		if _, _, ok := hc.next(); !ok {
			return
		}
	}
}

// url is the server's base URL.
func (h *hostile) url() string { return "http://" + h.addr }
