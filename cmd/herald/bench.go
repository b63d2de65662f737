package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/bench"
)

// runBench is `herald bench`: flags in, bench.Run, figures out.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("bench", "herald bench [--users 100000] [--latency 0s] [--mode users|messages|all|segment|template|urgent] [--open-rate F] [--database-url URL] [--nodes N] [--in-process] [--json] [flags]",
		"Starts an FCM emulator and the service on loopback, registers the users (one token each), pushes to all\n"+
			"of them through the Server API (--mode users: requests of 500 user IDs; messages: requests of 200\n"+
			"messages, one per user; all: one all-users push; segment: every user given three tags by one CSV tag\n"+
			"import, then one segment push whose three-leaf filter selects them all; template: the same tags, then\n"+
			"one all-users push of templates ({{userId}}, {{tag.NAME}}) with Korean and Japanese entries for the\n"+
			"devices' locales, every message checked as rendered), waits until the emulator has every message, and\n"+
			"reports accept latency, deliveries per second, the server's peak RSS and CPU-seconds per 1,000\n"+
			"deliveries, and the emulator's own ceiling. With --open-rate F every device then reports the push it got\n"+
			"as received (and a fraction F as opened too, in the same request) and the events per second are reported.\n"+
			"--mode urgent: one all-users push at the FCM project's quota (--project-rate, default 600000 a minute)\n"+
			"alone, then another with a one-user push of a second app of the project every --probe-every beside it\n"+
			"(--probe-priority high, or normal for the figures without the high lane): the probes' request-to-emulator\n"+
			"latency and the blast's rate against its rate alone.\n"+
			"The server runs as a herald serve process of its own on\n"+
			"SQLite in a temporary data directory, so its CPU and memory are measured apart from the bench's;\n"+
			"--in-process runs it inside the bench process instead (for --cpuprofile). With --database-url it\n"+
			"runs on PostgreSQL, in a fresh schema dropped at the end, and reports PostgreSQL's WAL and (on this machine)\n"+
			"its processes' CPU per 1,000 registrations, deliveries and events; with --nodes N as N herald serve\n"+
			"processes, requests spread over them.")
	fs := cmd.fs
	users := fs.Int("users", 100000, "users to register and push to, one token each")
	latency := fs.Duration("latency", 0, "delay the emulator adds to every send")
	mode := fs.String("mode", string(bench.ModeUsers), "how to push: users (500-user requests), messages (200-message requests), all (one all-users push), segment (one segment push over tags), template (one all-users push of templates in three languages)")
	sendRate := fs.Int("send-rate", herald.MaxSendRatePerMinute, "the bench app's send rate per minute (default the most an app may have, so that pacing to FCM's quota does not limit the run; an app's default is 600000)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	streams := fs.Int("concurrency", 500, "concurrent sends of the ceiling client (the server's: 50 per chunk × 10 workers)")
	registerWorkers := fs.Int("register-workers", 32, "concurrent SDK registrations")
	pushWorkers := fs.Int("push-workers", 8, "concurrent Server API push requests")
	openRate := fs.Float64("open-rate", -1, "after delivery, every device reports received through the SDK API (POST /api/sdk/v2/events), and this fraction (0 to 1) opened too, in the same request; the events per second are reported (default: no events phase)")
	eventWorkers := fs.Int("event-workers", 64, "concurrent SDK event reports (with --open-rate)")
	probeEvery := fs.Duration("probe-every", 200*time.Millisecond, "urgent mode: how often a one-user probe push is sent beside the blast")
	probePriority := fs.String("probe-priority", string(herald.PriorityHigh), "urgent mode: the probes' options.priority, high or normal")
	webhookEvents := fs.Bool("webhook-events", false, "turn every webhook event type on (push.sent, push.failed, push.received, push.opened, …) with a receiver in the bench process; delivery ends once it has every push.sent event")
	marketing := fs.Bool("marketing", false, "mark the pushes marketing (options.isMarketing; the users consent to marketing at any hour)")
	marketingCap := fs.Int("marketing-cap", 0, "with --marketing, the bench app's marketingCap.perDay (0: no cap)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the push and delivery phase to this file (the bench process's: the server's only with --in-process)")
	var setup benchSetup
	setup.flags(fs)
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	m, err := bench.ParseMode(*mode)
	if err != nil {
		return cmd.explain(fmt.Errorf("--mode: %w", err))
	}
	if m == bench.ModeUrgent && setup.projectRate == 0 {
		setup.projectRate = herald.DefaultFCMProjectRate
	}
	if err := setup.resolve(cmd.fs); err != nil {
		return cmd.explain(err)
	}
	opts := bench.Options{
		Users: *users, Mode: m, SendRatePerMinute: *sendRate, Latency: *latency, Streams: *streams,
		RegisterWorkers: *registerWorkers, PushWorkers: *pushWorkers,
		Events: *openRate != -1, OpenRate: *openRate, EventWorkers: *eventWorkers, WebhookEvents: *webhookEvents,
		ProbeEvery: *probeEvery, ProbePriority: *probePriority, Marketing: *marketing, MarketingCap: *marketingCap,
		StartServer: setup.startServer(stderr), Progress: stderr,
	}
	if *cpuProfile != "" {
		if setup.nodes > 0 {
			fmt.Fprintln(stderr, "bench: --cpuprofile profiles the bench process (emulator and client); add --in-process to profile the server")
		}
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

// flags defines the flags of where the server runs.
func (b *benchSetup) flags(fs *flag.FlagSet) {
	fs.StringVar(&b.databaseURL, "database-url", "", "postgres:// URL of a database to run on (a fresh schema per run, dropped after; the role needs CREATE); empty for SQLite")
	fs.IntVar(&b.nodes, "nodes", 1, "herald serve processes (more than one needs --database-url); 0 is --in-process")
	fs.BoolVar(&b.inProcess, "in-process", false, "run the server inside the bench process (its CPU and RSS are then the bench process's)")
	fs.StringVar(&b.binary, "binary", "", "the herald executable the server processes run (default this one)")
	fs.IntVar(&b.projectRate, "project-rate", 0, "the servers' FCM project rate a minute, HERALD_FCM_PROJECT_RATE (default the cap, so that pacing does not limit the run; in --mode urgent FCM's quota, 600000)")
}

// resolve settles where the server runs: --in-process (or --nodes 0)
// inside the bench process, else --nodes herald serve processes of
// --binary, and checks the setup.
func (b *benchSetup) resolve(fs *flag.FlagSet) error {
	nodesTyped := false
	fs.Visit(func(f *flag.Flag) { nodesTyped = nodesTyped || f.Name == "nodes" })
	switch {
	case b.inProcess && nodesTyped && b.nodes != 0:
		return errors.New("--in-process: the server runs inside the bench process, not as --nodes processes")
	case b.inProcess:
		b.nodes = 0
	case b.nodes == 0:
		b.inProcess = true
	}
	if !b.inProcess && b.binary == "" {
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
