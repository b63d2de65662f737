package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/heraldpush/herald/fcm/emulator"
)

func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("fcm-emulator", "herald fcm-emulator [--addr 127.0.0.1:9099] [--latency 0s] [--service-account FILE]",
		"Runs an FCM HTTP v1 emulator: POST /token and POST /v1/projects/{project}/messages:send, over HTTP/1.1\n"+
			"and cleartext HTTP/2, with GET /emulator/messages to see what it received. With --service-account it\n"+
			"first writes a service-account file whose token_uri is this emulator's, ready to upload to an app.")
	addr := cmd.fs.String("addr", "127.0.0.1:9099", "listen address")
	latency := cmd.fs.Duration("latency", 0, "delay added to every send")
	saFile := cmd.fs.String("service-account", "", "write a service-account file for this emulator to `FILE` (mode 0600, replaced if it exists)")
	project := cmd.fs.String("project", "herald-local", "project_id of the --service-account file")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	url, stop, err := startEmulator(*addr, emulator.Options{Latency: *latency})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "herald: FCM emulator on %s (token URI %s/token)\n", url, url)
	if *saFile != "" {
		if err := writeServiceAccount(*saFile, *project, url+"/token"); err != nil {
			return errors.Join(fmt.Errorf("--service-account: %w", err), stop())
		}
		fmt.Fprintf(stdout, "herald: wrote service-account file %s (project %s); upload it to an app and start serve with\n"+
			"  HERALD_FCM_ENDPOINT=%s HERALD_FCM_ALLOW_ANY_TOKEN_URI=true\n", *saFile, *project, url)
	}
	<-ctx.Done()
	return stop()
}

// writeServiceAccount writes a service-account file of project whose
// token_uri is tokenURI, with a fresh key, to path (mode 0600). It is
// written beside path and renamed, so a reader never sees half a file.
func writeServiceAccount(path, project, tokenURI string) error {
	b, err := emulator.NewServiceAccount(project, tokenURI, nil)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".service-account-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
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
