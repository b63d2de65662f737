package bench

import (
	"bytes"
	"fmt"
	"io"
	"runtime/pprof"
)

// Result holds every figure of a run. Durations are in seconds or
// milliseconds as their names say.
type Result struct {
	Users int `json:"users"`
	// Mode is how the users were pushed to: "users", "messages", "all",
	// "segment" or "template".
	Mode              string  `json:"mode"`
	EmulatorLatencyMS float64 `json:"emulatorLatencyMs"`
	// SendRatePerMinute is the bench app's send rate as the server
	// answered it when the app was made.
	SendRatePerMinute int `json:"sendRatePerMinute"`
	GOMAXPROCS        int `json:"gomaxprocs"`
	NumCPU            int `json:"numCpu"`
	// Engine is the server's store ("sqlite" or "postgres"); Nodes the
	// number of `herald serve` processes, 0 when the server ran inside
	// the bench process.
	Engine string `json:"engine"`
	Nodes  int    `json:"nodes"`
	// ServerProcess says where the server ran: Separate or InProcess.
	ServerProcess string `json:"serverProcess"`
	// WebhookEvents: every webhook event type was on, and delivery ended
	// once the webhook had every push.sent event (Options.WebhookEvents).
	WebhookEvents bool `json:"webhookEvents,omitempty"`

	Register Register `json:"register"`
	// Tags is the tag import of the segment and template modes.
	Tags     *TagImport `json:"tags,omitempty"`
	Accept   Accept     `json:"accept"`
	Delivery Delivery   `json:"delivery"`
	// Baseline is the plain all-users push sent after a segment or
	// template push to the same devices.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Urgent is the urgent mode's second blast with probes beside it.
	Urgent *Urgent `json:"urgent,omitempty"`

	// PeakRSSBytes is the server's peak RSS after delivery (VmHWM, summed
	// over its processes; 0 when unknown); PeakRSSScope says what it
	// covers. Server has the same with its CPU time.
	PeakRSSBytes int64  `json:"peakRssBytes"`
	PeakRSSScope string `json:"peakRssScope"`
	Server       Usage  `json:"server"`
	// BenchProcess is the bench process's own usage: the FCM emulator
	// and the client (and the server too when it runs in process).
	BenchProcess Usage `json:"benchProcess"`

	// Database is PostgreSQL's own work, when the server ran on it.
	Database *Database `json:"database,omitempty"`

	// Events is the events phase, when the run had one (Options.Events).
	Events *Events `json:"events,omitempty"`

	Ceiling Ceiling `json:"ceiling"`
	// Ratio is Delivery.PerSecond / Ceiling.PerSecond.
	Ratio float64 `json:"ratio"`
}

// Register is the SDK registration phase.
type Register struct {
	Workers   int     `json:"workers"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	// ServerCPUSeconds is the server's CPU time over the phase (the
	// processes of Result.Server's scope), ServerCPUSecondsPer1000 per
	// 1,000 registrations.
	ServerCPUSeconds        float64 `json:"serverCpuSeconds"`
	ServerCPUSecondsPer1000 float64 `json:"serverCpuSecondsPer1000"`
}

// TagImport is the upload of every user's tags, one CSV file through the
// admin API, before the push.
type TagImport struct {
	Rows      int     `json:"rows"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
}

// Accept is the Server API's accept latency of the push requests: of
// every request, or of the one all-users push (p50 = p99 = max then).
type Accept struct {
	// Endpoint is the Server API path of the requests.
	Endpoint string `json:"endpoint"`
	Requests int    `json:"requests"`
	// UsersPerRequest is the users one request reaches (the last may
	// reach fewer): 500, 200 (one message each), or every user.
	UsersPerRequest int     `json:"usersPerRequest"`
	Workers         int     `json:"workers"`
	P50MS           float64 `json:"p50Ms"`
	P99MS           float64 `json:"p99Ms"`
	MaxMS           float64 `json:"maxMs"`
}

// Delivery is the end-to-end phase: from the first push request until the
// emulator accepted the last message.
type Delivery struct {
	Delivered int     `json:"delivered"`
	Rejected  int     `json:"rejected"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	// UsersReached is the users the emulator has a message for, checked
	// after the timing; Duplicates the messages beyond one per user
	// (sends repeated after a failure or a crash).
	UsersReached int `json:"usersReached"`
	Duplicates   int `json:"duplicates"`
}

// Baseline is a plain all-users push to the devices the run's push
// reached, sent after it in the same run, and the run's push beside it.
type Baseline struct {
	Endpoint  string  `json:"endpoint"`
	AcceptMS  float64 `json:"acceptMs"`
	Delivered int     `json:"delivered"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	// ServerCPUSecondsPer1000 is the server's CPU time per 1,000 of its
	// deliveries.
	ServerCPUSecondsPer1000 float64 `json:"serverCpuSecondsPer1000"`
	// RateRatio is the run's deliveries per second over the baseline's;
	// CPURatio the run's server CPU per delivery over the baseline's.
	RateRatio float64 `json:"rateRatio"`
	CPURatio  float64 `json:"cpuRatio"`
}

// Ceiling is the emulator's own rate with a bare client.
type Ceiling struct {
	Client    string  `json:"client"`
	Streams   int     `json:"streams"`
	Sent      int     `json:"sent"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
}

// Where the server ran (Result.ServerProcess).
const (
	// Separate: as `herald serve` processes.
	Separate = "separate"
	// InProcess: inside the bench process.
	InProcess = "in-process"
)

// The scopes of the usage figures.
const (
	// rssScope: everything runs in one process.
	rssScope = "whole bench process: the server, the FCM emulator (which keeps every message) and the bench client"
	// nodesScope: the server's own processes.
	nodesScope = "the herald serve processes only, summed over the nodes"
	// benchScope: the bench process, the server apart.
	benchScope = "the bench process: the FCM emulator (which keeps every message) and the bench client"
)

// WriteText writes the result for people.
func (r Result) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "herald bench: %d users, mode %s, emulator latency %gms, app send rate %d/min, GOMAXPROCS %d (%d CPUs), %s\n",
		r.Users, r.Mode, r.EmulatorLatencyMS, r.SendRatePerMinute, r.GOMAXPROCS, r.NumCPU, r.serverShape())
	fmt.Fprintf(&b, "  register   %d users in %.2fs: %.0f/s (%d workers, SDK API), server %.3f CPU-s per 1,000\n", r.Users, r.Register.Seconds,
		r.Register.PerSecond, r.Register.Workers, r.Register.ServerCPUSecondsPer1000)
	if t := r.Tags; t != nil {
		fmt.Fprintf(&b, "  tags       %d users' three tags in %.2fs: %.0f rows/s (one CSV file, admin API)\n", t.Rows, t.Seconds, t.PerSecond)
	}
	r.writeAccept(&b)
	fmt.Fprintf(&b, "  deliver    %d messages (%d rejected) in %.2fs: %.0f deliveries/s (first request to last message at the emulator)\n",
		r.Delivery.Delivered, r.Delivery.Rejected, r.Delivery.Seconds, r.Delivery.PerSecond)
	fmt.Fprintf(&b, "             %d users reached, %d duplicate messages\n", r.Delivery.UsersReached, r.Delivery.Duplicates)
	writeUsage(&b, "server", r.Server)
	if r.Nodes > 0 {
		writeUsage(&b, "bench", r.BenchProcess)
	}
	if bl := r.Baseline; bl != nil {
		fmt.Fprintf(&b, "  baseline   then one plain all-users push to the same devices: %d messages in %.2fs: %.0f deliveries/s, server %.3f CPU-s per 1,000\n",
			bl.Delivered, bl.Seconds, bl.PerSecond, bl.ServerCPUSecondsPer1000)
		fmt.Fprintf(&b, "             this run's push: %.2f× the baseline's rate, %.2f× its server CPU per delivery (peak RSS covers both)\n", bl.RateRatio, bl.CPURatio)
	}
	if u := r.Urgent; u != nil {
		fmt.Fprintf(&b, "  urgent     %s one-user pushes of another app of the project, idle p50 %.1fms; then one every %gms beside a second all-users push:\n",
			u.Priority, u.IdleP50MS, u.ProbeEveryMS)
		fmt.Fprintf(&b, "             %d probes (%d lost), request to emulator p50 %.1fms  p99 %.1fms  max %.1fms\n", u.Probes, u.Lost, u.P50MS, u.P99MS, u.MaxMS)
		fmt.Fprintf(&b, "             the blast beside them %.0f deliveries/s: %.2f× its rate alone\n", u.BlastPerSecond, u.RateRatio)
	}
	if e := r.Events; e != nil {
		fmt.Fprintf(&b, "  events     %d events in %d requests (open rate %g, %d workers, SDK API) in %.2fs: %.0f events/s  p50 %.1fms  p99 %.1fms  max %.1fms\n",
			e.Events, e.Requests, e.OpenRate, e.Workers, e.Seconds, e.PerSecond, e.P50MS, e.P99MS, e.MaxMS)
		fmt.Fprintf(&b, "             %d accepted, %d ignored; pushes count %d received, %d opened; server CPU %.2fs: %.3f CPU-s per 1,000 events\n",
			e.Accepted, e.Ignored, e.Received, e.Opened, e.ServerCPUSeconds, e.ServerCPUSecondsPer1000Events)
	}
	if d := r.Database; d != nil {
		writeDatabase(&b, *d)
	}
	fmt.Fprintf(&b, "  ceiling    %d messages in %.2fs: %.0f/s with %d streams\n", r.Ceiling.Sent, r.Ceiling.Seconds, r.Ceiling.PerSecond, r.Ceiling.Streams)
	fmt.Fprintf(&b, "             (%s)\n", r.Ceiling.Client)
	fmt.Fprintf(&b, "  ratio      %.2f (server / ceiling)\n", r.Ratio)
	_, err := w.Write(b.Bytes())
	return err
}

// writeAccept writes the accept latency line.
func (r Result) writeAccept(b *bytes.Buffer) {
	a := r.Accept
	switch Mode(r.Mode) {
	case ModeAll, ModeUrgent:
		fmt.Fprintf(b, "  accept     one all-users push (%s): %.1fms\n", a.Endpoint, a.MaxMS)
		return
	case ModeSegment:
		fmt.Fprintf(b, "  accept     one segment push, a three-leaf filter over the tags (%s): %.1fms\n", a.Endpoint, a.MaxMS)
		return
	case ModeTemplate:
		fmt.Fprintf(b, "  accept     one all-users push of templates in three languages (%s): %.1fms\n", a.Endpoint, a.MaxMS)
		return
	}
	unit := "users"
	if r.Mode == string(ModeMessages) {
		unit = "messages"
	}
	fmt.Fprintf(b, "  accept     %d requests of %d %s to %s (%d workers): p50 %.1fms  p99 %.1fms  max %.1fms\n",
		a.Requests, a.UsersPerRequest, unit, a.Endpoint, a.Workers, a.P50MS, a.P99MS, a.MaxMS)
}

// serverShape describes where the server ran, for the heading.
func (r Result) serverShape() string {
	if r.Nodes == 0 {
		return "server on " + r.Engine + " inside the bench process"
	}
	if r.Nodes == 1 {
		return "server on " + r.Engine + " as one herald serve process"
	}
	return fmt.Sprintf("server on %s as %d herald serve processes", r.Engine, r.Nodes)
}

// writeUsage writes one group's peak RSS and CPU time.
func writeUsage(b *bytes.Buffer, name string, u Usage) {
	fmt.Fprintf(b, "  %-9s  peak RSS %.0f MiB", name, float64(u.PeakRSSBytes)/(1<<20))
	if len(u.PeakRSSBytesPerProcess) > 1 {
		fmt.Fprint(b, " (")
		for i, n := range u.PeakRSSBytesPerProcess {
			if i > 0 {
				fmt.Fprint(b, " + ")
			}
			fmt.Fprintf(b, "%.0f", float64(n)/(1<<20))
		}
		fmt.Fprint(b, ")")
	}
	fmt.Fprintf(b, ", CPU %.2fs while delivering: %.3f CPU-s per 1,000 deliveries\n", u.CPUSeconds, u.CPUSecondsPer1000Deliveries)
	fmt.Fprintf(b, "             (%s)\n", u.Scope)
}

// writeDatabase writes PostgreSQL's work per phase.
func writeDatabase(b *bytes.Buffer, d Database) {
	phases := []struct {
		name, unit string
		p          *DatabasePhase
	}{{"registering", "registrations", &d.Register}, {"delivering", "deliveries", &d.Deliver}, {"events", "events", d.Events}}
	for i, ph := range phases {
		if ph.p == nil {
			continue
		}
		label := ""
		if i == 0 {
			label = "database"
		}
		fmt.Fprintf(b, "  %-9s  %s: ", label, ph.name)
		if c, per := ph.p.CPUSeconds, ph.p.CPUSecondsPer1000; c != nil && per != nil {
			fmt.Fprintf(b, "PostgreSQL CPU %.2fs (%.3f CPU-s per 1,000 %s), ", *c, *per, ph.unit)
		}
		fmt.Fprintf(b, "WAL %.1f MiB (%.0f KiB per 1,000 %s), %.0f row versions per 1,000\n",
			float64(ph.p.WALBytes)/(1<<20), ph.p.WALBytesPer1000/(1<<10), ph.unit, ph.p.RowVersionsPer1000)
		for _, s := range ph.p.WALShares[:min(len(ph.p.WALShares), 6)] {
			fmt.Fprintf(b, "             WAL %5.1f MiB (full pages %.1f) in %d records: %s\n",
				float64(s.Bytes)/(1<<20), float64(s.FPIBytes)/(1<<20), s.Records, s.Relation)
		}
	}
	fmt.Fprintf(b, "             (%s)\n", d.Scope)
}

// startCPUProfile profiles the process into w until the returned stop.
func startCPUProfile(w io.Writer) (stop func(), err error) {
	if err := pprof.StartCPUProfile(w); err != nil {
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	return pprof.StopCPUProfile, nil
}
