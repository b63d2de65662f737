package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/bench"
)

// runBench is `herald bench`: flags in, bench.Run, figures out.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("bench", "herald bench [--users 100000] [--latency 0s] [--json] [flags]",
		"Starts an FCM emulator and the service on loopback, registers the users (one token each), sends one push\n"+
			"to all of them through the Server API, waits until the emulator has every message, and reports accept\n"+
			"latency, deliveries per second, the server's peak RSS and CPU, and the emulator's own ceiling.")
	fs := cmd.fs
	users := fs.Int("users", 100000, "users to register and push to, one token each")
	latency := fs.Duration("latency", 0, "delay the emulator adds to every send")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	streams := fs.Int("concurrency", 500, "concurrent sends of the ceiling client (the server's: 50 per chunk × 10 workers)")
	registerWorkers := fs.Int("register-workers", 32, "concurrent SDK registrations")
	pushWorkers := fs.Int("push-workers", 8, "concurrent Server API push requests")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the push and delivery phase to this file")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	opts := bench.Options{
		Users: *users, Latency: *latency, Streams: *streams,
		RegisterWorkers: *registerWorkers, PushWorkers: *pushWorkers,
		StartServer: benchServer(stderr), Progress: stderr,
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.CPUProfile = f
	}
	res, err := bench.Run(ctx, opts)
	if res.Delivery.Delivered > 0 || err == nil {
		if werr := writeBench(stdout, res, *asJSON); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

func writeBench(w io.Writer, res bench.Result, asJSON bool) error {
	if !asJSON {
		return res.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// benchServer starts the service in-process on loopback, on a fresh data
// dir that Stop removes, logging warnings and errors to logOut.
func benchServer(logOut io.Writer) func(ctx context.Context, fcmEndpoint string) (bench.Server, error) {
	return func(ctx context.Context, fcmEndpoint string) (bench.Server, error) {
		dir, err := os.MkdirTemp("", "herald-bench-")
		if err != nil {
			return bench.Server{}, err
		}
		cfg := config{
			Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: dir,
			AdminToken:  "ha_" + herald.NewSecretKey()[3:],
			FCMEndpoint: fcmEndpoint, FCMAllowAnyTokenURI: true, WebhookAllowPrivate: true,
			LogLevel: "warn", LogFormat: "text",
		}
		if err := cfg.validate(); err != nil {
			return bench.Server{}, errors.Join(err, os.RemoveAll(dir))
		}
		svc, err := startService(ctx, cfg, io.Discard, logOut)
		if err != nil {
			return bench.Server{}, errors.Join(fmt.Errorf("start service: %w", err), os.RemoveAll(dir))
		}
		return bench.Server{
			PublicURL: svc.PublicURL, AdminURL: svc.AdminURL, AdminToken: svc.AdminToken,
			Stop: func() error { return errors.Join(svc.shutdown(), os.RemoveAll(dir)) },
		}, nil
	}
}
