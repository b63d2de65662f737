package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// Result holds every figure of a run. Durations are in seconds or
// milliseconds as their names say.
type Result struct {
	Users             int     `json:"users"`
	EmulatorLatencyMS float64 `json:"emulatorLatencyMs"`
	GOMAXPROCS        int     `json:"gomaxprocs"`
	NumCPU            int     `json:"numCpu"`

	Register Register `json:"register"`
	Accept   Accept   `json:"accept"`
	Delivery Delivery `json:"delivery"`

	// PeakRSSBytes is the process's VmHWM after delivery (0 when unknown);
	// PeakRSSScope says what it covers.
	PeakRSSBytes int64  `json:"peakRssBytes"`
	PeakRSSScope string `json:"peakRssScope"`

	Ceiling Ceiling `json:"ceiling"`
	// Ratio is Delivery.PerSecond / Ceiling.PerSecond.
	Ratio float64 `json:"ratio"`
}

// Register is the SDK registration phase.
type Register struct {
	Workers   int     `json:"workers"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
}

// Accept is the Server API's accept latency of the push requests.
type Accept struct {
	Requests        int     `json:"requests"`
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
}

// Ceiling is the emulator's own rate with a bare client.
type Ceiling struct {
	Client    string  `json:"client"`
	Streams   int     `json:"streams"`
	Sent      int     `json:"sent"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
}

// rssScope says what the peak RSS covers: everything runs in one process.
const rssScope = "whole bench process: the server, the FCM emulator (which keeps every message) and the bench client"

// WriteText writes the result for people.
func (r Result) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "herald bench: %d users, emulator latency %gms, GOMAXPROCS %d (%d CPUs)\n", r.Users, r.EmulatorLatencyMS, r.GOMAXPROCS, r.NumCPU)
	fmt.Fprintf(&b, "  register   %d users in %.2fs: %.0f/s (%d workers, SDK API)\n", r.Users, r.Register.Seconds, r.Register.PerSecond, r.Register.Workers)
	fmt.Fprintf(&b, "  accept     %d requests of %d users (%d workers): p50 %.1fms  p99 %.1fms  max %.1fms\n",
		r.Accept.Requests, r.Accept.UsersPerRequest, r.Accept.Workers, r.Accept.P50MS, r.Accept.P99MS, r.Accept.MaxMS)
	fmt.Fprintf(&b, "  deliver    %d messages (%d rejected) in %.2fs: %.0f deliveries/s (first request to last message at the emulator)\n",
		r.Delivery.Delivered, r.Delivery.Rejected, r.Delivery.Seconds, r.Delivery.PerSecond)
	fmt.Fprintf(&b, "  peak RSS   %.0f MiB (%s)\n", float64(r.PeakRSSBytes)/(1<<20), r.PeakRSSScope)
	fmt.Fprintf(&b, "  ceiling    %d messages in %.2fs: %.0f/s with %d streams\n", r.Ceiling.Sent, r.Ceiling.Seconds, r.Ceiling.PerSecond, r.Ceiling.Streams)
	fmt.Fprintf(&b, "             (%s)\n", r.Ceiling.Client)
	fmt.Fprintf(&b, "  ratio      %.2f (server / ceiling)\n", r.Ratio)
	_, err := w.Write(b.Bytes())
	return err
}

// peakRSS returns the process's peak resident set (VmHWM), or 0 where
// /proc is not available.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// startCPUProfile profiles the process into w until the returned stop.
func startCPUProfile(w io.Writer) (stop func(), err error) {
	if err := pprof.StartCPUProfile(w); err != nil {
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	return pprof.StopCPUProfile, nil
}
