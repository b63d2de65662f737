package fcm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// TestCoalescingConnKeepsEachWrite: writes from many goroutines arrive
// whole and each goroutine's in its order, however they are gathered.
func TestCoalescingConnKeepsEachWrite(t *testing.T) {
	client, server := net.Pipe()
	c := newCoalescingConn(client)
	const writers, each = 8, 200
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(server)
		got <- b
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := fmt.Fprintf(c, "<%d:%04d>", w, i); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Close drops what is not yet written: wait for the writer first.
	c.mu.Lock()
	for len(c.pending) > 0 {
		c.drained.Wait()
	}
	c.mu.Unlock()
	_ = c.Close()
	b := <-got
	next := make([]int, writers)
	for len(b) > 0 {
		var w, i int
		if _, err := fmt.Sscanf(string(b[:8]), "<%d:%04d>", &w, &i); err != nil {
			t.Fatalf("torn write at %q: %v", b[:min(len(b), 16)], err)
		}
		if i != next[w] {
			t.Fatalf("writer %d: got %d, want %d", w, i, next[w])
		}
		next[w]++
		b = b[8:]
	}
	for w, n := range next {
		if n != each {
			t.Errorf("writer %d: %d writes arrived, want %d", w, n, each)
		}
	}
}

// TestCoalescingConnFails: once a write fails, every later Write returns
// the error and the connection is closed, so its reader fails too.
func TestCoalescingConnFails(t *testing.T) {
	client, server := net.Pipe()
	c := newCoalescingConn(client)
	_ = server.Close() // the peer goes away
	var err error
	for range 100 {
		if _, err = c.Write([]byte("x")); err != nil {
			break
		}
		c.mu.Lock()
		for len(c.pending) > 0 && c.err == nil {
			c.drained.Wait()
		}
		c.mu.Unlock()
	}
	if err == nil {
		t.Fatal("writes to a closed peer kept succeeding")
	}
	if _, rerr := client.Read(make([]byte, 1)); rerr == nil {
		t.Error("the connection was not closed after the failed write")
	}
}

// TestCoalescingConnCloseWakesWriters: a Write waiting for room returns
// once the connection is closed.
func TestCoalescingConnCloseWakesWriters(t *testing.T) {
	client, _ := net.Pipe() // nobody reads: the writer blocks
	c := newCoalescingConn(client)
	done := make(chan error)
	go func() {
		big := bytes.Repeat([]byte("y"), maxPending)
		for {
			if _, err := c.Write(big); err != nil {
				done <- err
				return
			}
		}
	}()
	_ = c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("err = %v, want net.ErrClosed", err)
	}
}
