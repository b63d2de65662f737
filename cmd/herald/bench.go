package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/heraldpush/herald/bench"
)

// runBench is `herald bench`: flags in, bench.Run, figures out.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("bench", "herald bench [--users 100000] [--latency 0s] [--database-url URL] [--nodes N] [--json] [flags]",
		"Starts an FCM emulator and the service on loopback, registers the users (one token each), sends one push\n"+
			"to all of them through the Server API, waits until the emulator has every message, and reports accept\n"+
			"latency, deliveries per second, the server's peak RSS and CPU-seconds per 1,000 deliveries (apart from\n"+
			"the bench process's), and the emulator's own ceiling. With --database-url the server runs on PostgreSQL,\n"+
			"in a fresh schema dropped at the end; with --nodes N as N herald serve processes, requests spread over them.")
	fs := cmd.fs
	users := fs.Int("users", 100000, "users to register and push to, one token each")
	latency := fs.Duration("latency", 0, "delay the emulator adds to every send")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	streams := fs.Int("concurrency", 500, "concurrent sends of the ceiling client (the server's: 50 per chunk × 10 workers)")
	registerWorkers := fs.Int("register-workers", 32, "concurrent SDK registrations")
	pushWorkers := fs.Int("push-workers", 8, "concurrent Server API push requests")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the push and delivery phase to this file (the bench process's: the server's only when it runs in process)")
	var setup benchSetup
	fs.StringVar(&setup.databaseURL, "database-url", "", "postgres:// URL of a database to run on (a fresh schema per run, dropped after; the role needs CREATE); empty for SQLite")
	fs.IntVar(&setup.nodes, "nodes", 0, "herald serve processes; 0 runs the server inside the bench process (default 1 with --database-url, else 0)")
	fs.StringVar(&setup.binary, "binary", "", "the herald executable the nodes run (default this one)")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	if err := setup.resolve(cmd.fs); err != nil {
		return cmd.explain(err)
	}
	opts := bench.Options{
		Users: *users, Latency: *latency, Streams: *streams,
		RegisterWorkers: *registerWorkers, PushWorkers: *pushWorkers,
		StartServer: setup.startServer(stderr), Progress: stderr,
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

// resolve fills the defaults that depend on other flags (--nodes is 1 with
// --database-url unless given) and checks the setup.
func (b *benchSetup) resolve(fs *flag.FlagSet) error {
	typed := false
	fs.Visit(func(f *flag.Flag) { typed = typed || f.Name == "nodes" })
	if !typed && b.databaseURL != "" {
		b.nodes = 1
	}
	if b.nodes > 0 && b.binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--binary: this executable: %w", err)
		}
		b.binary = exe
	}
	return b.check()
}

func writeBench(w io.Writer, res bench.Result, asJSON bool) error {
	if !asJSON {
		return res.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
