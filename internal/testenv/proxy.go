package testenv

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy stands between Herald and PostgreSQL so a test can take the
// database away from one herald only: frozen (connections stay open and
// nothing passes, as with a SIGSTOPped server, a paused VM or a
// black-holed path) or stopped (every connection closed and new ones
// refused at once). The shared PostgreSQL server itself is never touched.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	frozen  chan struct{} // closed when bytes may pass
	refuse  bool
	conns   map[net.Conn]struct{}
	closing bool
	wg      sync.WaitGroup
}

// StartProxy listens on a free loopback port and forwards to upstream
// until the test ends.
func StartProxy(t *testing.T, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, upstream: upstream, frozen: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.frozen)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse || p.closing
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			continue
		}
		p.wg.Go(func() { p.pipe(c, up) })
		p.wg.Go(func() { p.pipe(up, c) })
	}
}

// track records a connection pair, or closes it when the proxy stopped
// meanwhile.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refuse || p.closing {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

// pipe copies src to dst, holding every chunk while the proxy is frozen.
func (p *Proxy) pipe(src, dst net.Conn) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thawed := p.frozen
			p.mu.Unlock()
			<-thawed
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Freeze holds every byte from now on, in both directions.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = make(chan struct{})
}

// Stop closes every connection and refuses new ones.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = true
	p.thawLocked()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore lets connections and bytes through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = false
	p.thawLocked()
}

func (p *Proxy) thawLocked() {
	select {
	case <-p.frozen:
	default:
		close(p.frozen)
	}
}

func (p *Proxy) close() {
	p.Stop()
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }
