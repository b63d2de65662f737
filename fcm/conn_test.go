package fcm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
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
	if err := c.awaitRoom(t.Context(), time.Time{}, maxPending); err != nil {
		t.Fatal(err)
	}
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
// the error; the connection is left open for its reader, until Close.
func TestCoalescingConnFails(t *testing.T) {
	client, server := net.Pipe()
	c := newCoalescingConn(client)
	_ = server.Close() // the peer goes away
	var err error
	for range 100 {
		if _, err = c.Write([]byte("x")); err != nil {
			break
		}
		_ = c.awaitRoom(t.Context(), time.Time{}, maxPending)
	}
	if err == nil {
		t.Fatal("writes to a closed peer kept succeeding")
	}
	_ = c.Close()
	if _, rerr := client.Read(make([]byte, 1)); rerr == nil {
		t.Error("the connection was not closed by Close")
	}
}

// TestCoalescingConnCloseWakesWriters: a writer waiting for room returns
// once the connection is closed.
func TestCoalescingConnCloseWakesWriters(t *testing.T) {
	client, _ := net.Pipe() // nobody reads: the writer blocks
	c := newCoalescingConn(client)
	done := make(chan error)
	go func() {
		big := bytes.Repeat([]byte("y"), maxPending)
		for {
			if err := c.awaitRoom(t.Context(), time.Time{}, len(big)); err != nil {
				done <- err
				return
			}
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

// TestCoalescingConnRoomDeadline: a wait for room on a peer that reads
// nothing ends at its deadline with errWriteStalled, and by its ctx.
func TestCoalescingConnRoomDeadline(t *testing.T) {
	client, _ := net.Pipe() // nobody reads
	c := newCoalescingConn(client)
	t.Cleanup(func() { _ = c.Close() })
	// The writer takes the first write and blocks on it; the second stays
	// pending.
	if _, err := c.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		c.mu.Lock()
		taken := len(c.pending) == 0
		c.mu.Unlock()
		if taken {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer never took the first write")
		}
		time.Sleep(time.Millisecond) // polls for the writer
	}
	if _, err := c.Write(bytes.Repeat([]byte("y"), maxPending)); err != nil {
		t.Fatal(err)
	}
	if err := c.awaitRoom(t.Context(), time.Now().Add(10*time.Millisecond), 100); !errors.Is(err, errWriteStalled) {
		t.Errorf("at the deadline: got %v, want errWriteStalled", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.awaitRoom(ctx, time.Time{}, 100); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v, want context.Canceled", err)
	}
}

// TestCoalescingConnCloseFlushedStuck: closeFlushed on a connection whose
// writer is stuck (the peer reads nothing) still closes it, once the last
// write's h2CloseTimeout has passed.
func TestCoalescingConnCloseFlushedStuck(t *testing.T) {
	t.Parallel()
	client, server := net.Pipe()
	t.Cleanup(func() { _ = server.Close() })
	c := newCoalescingConn(client)
	if _, err := c.Write([]byte("stuck")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); c.size.Load() != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the writer never took the write")
		}
		time.Sleep(time.Millisecond) // polls for the writer, then stuck in it
	}
	c.closeFlushed()
	// A read on the closed end fails at once; on an open one it waits for
	// the deadline, well past h2CloseTimeout.
	_ = client.SetReadDeadline(time.Now().Add(h2CloseTimeout + 5*time.Second))
	if _, err := client.Read(make([]byte, 1)); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("read on the client's end: got %v, want io.ErrClosedPipe (closed)", err)
	}
}
