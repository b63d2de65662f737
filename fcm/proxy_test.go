package fcm

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connectProxy is an HTTP CONNECT proxy on 127.0.0.1.
type connectProxy struct {
	url     *url.URL
	tunnels atomic.Int64
	// to, when set, is where every tunnel goes, whatever it asks for.
	to string
	// asked records the targets the tunnels asked for.
	mu    sync.Mutex
	asked []string
}

func startConnectProxy(t *testing.T) *connectProxy {
	t.Helper()
	return startConnectProxyTo(t, "")
}

// startConnectProxyTo starts a proxy whose tunnels all go to addr ("":
// where each asks).
func startConnectProxyTo(t *testing.T, addr string) *connectProxy {
	t.Helper()
	p := &connectProxy{to: addr}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		p.mu.Lock()
		p.asked = append(p.asked, r.Host)
		p.mu.Unlock()
		target := r.Host
		if p.to != "" {
			target = p.to
		}
		upstream, err := net.Dial("tcp", target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer upstream.Close()
		down, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer down.Close()
		p.tunnels.Add(1)
		if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(upstream, down)
			_ = upstream.(*net.TCPConn).CloseWrite()
			close(done)
		}()
		_, _ = io.Copy(down, upstream)
		_ = down.Close()
		<-done
	}))
	t.Cleanup(srv.Close)
	var err error
	if p.url, err = url.Parse(srv.URL); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProxyFromEnvironment: with HTTPS_PROXY set, both transports reach
// an https endpoint through its CONNECT tunnel, asked for the endpoint's
// host and port. (Loopback addresses are never proxied, as net/http has
// it: the endpoint is named fcm.example.com, which httptest's
// certificate covers, and the proxy tunnels to the test server.)
func TestProxyFromEnvironment(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	proxy := startConnectProxyTo(t, ts.Listener.Addr().String())
	t.Setenv("HTTPS_PROXY", proxy.url.String())
	t.Setenv("NO_PROXY", "")
	for _, kind := range transportKinds {
		t.Run(kind, func(t *testing.T) {
			before := proxy.tunnels.Load()
			tr := newTestTransport(t, kind, "https://fcm.example.com", transportConfig{
				tlsConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig,
				proxy:     environmentProxy(),
			})
			resp, err := tr.post(t.Context(), time.Now().Add(10*time.Second), "/v1/projects/p/messages:send", "Bearer t", []byte("{}"))
			if err != nil || resp.status != 200 {
				t.Fatalf("got status %d error %v, want 200 through the proxy", resp.status, err)
			}
			if got := proxy.tunnels.Load() - before; got != 1 {
				t.Errorf("tunnels: got %d, want 1", got)
			}
			proxy.mu.Lock()
			defer proxy.mu.Unlock()
			if got := proxy.asked[len(proxy.asked)-1]; got != "fcm.example.com:443" {
				t.Errorf("tunnel asked for %q, want fcm.example.com:443", got)
			}
		})
	}
}

// TestEnvironmentProxy: HTTPS_PROXY and NO_PROXY as net/http reads them.
func TestEnvironmentProxy(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy.internal:3128")
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("NO_PROXY", "fcm.internal,.corp.example")
	proxy := environmentProxy()
	for _, tt := range []struct {
		url, want string
	}{
		{"https://fcm.googleapis.com", "http://proxy.internal:3128"},
		{"https://fcm.internal", ""},
		{"https://push.corp.example", ""},
		{"https://127.0.0.1:8443", ""}, // loopback is never proxied
	} {
		u, _ := url.Parse(tt.url)
		got, err := proxy(u)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		var s string
		if got != nil {
			s = got.String()
		}
		if s != tt.want {
			t.Errorf("%s: got proxy %q, want %q", tt.url, s, tt.want)
		}
	}
}
