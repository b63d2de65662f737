package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/heraldpush/herald/fcm/emulator"
)

func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fcm-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9099", "listen address")
	latency := fs.Duration("latency", 0, "delay added to every send")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url, stop, err := startEmulator(*addr, emulator.Options{Latency: *latency})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "herald: FCM emulator on %s (token URI %s/token)\n", url, url)
	<-ctx.Done()
	return stop()
}

// startEmulator serves an emulator on addr over HTTP/1.1 and cleartext
// HTTP/2; stop closes it.
func startEmulator(addr string, opts emulator.Options) (url string, stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := emulator.New(opts).Server(ln.Addr().String())
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}, nil
}
