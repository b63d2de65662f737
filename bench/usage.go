package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcessUsage is what one process has used so far: CPU time (user and
// system) and its peak resident set.
type ProcessUsage struct {
	CPUSeconds   float64
	PeakRSSBytes int64
}

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// ReadProcessUsage reads the usage of process pid from /proc ("self" for
// this process). It fails where /proc is not available.
func ReadProcessUsage(pid string) (ProcessUsage, error) {
	cpu, err := procCPU(pid)
	if err != nil {
		return ProcessUsage{}, err
	}
	rss, err := procPeakRSS(pid)
	if err != nil {
		return ProcessUsage{}, err
	}
	return ProcessUsage{CPUSeconds: cpu, PeakRSSBytes: rss}, nil
}

// procCPU returns utime + stime of /proc/<pid>/stat in seconds.
func procCPU(pid string) (float64, error) {
	st, err := readStat(pid)
	return st.cpu, err
}

// procPeakRSS returns VmHWM of /proc/<pid>/status in bytes.
func procPeakRSS(pid string) (int64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
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
			return 0, fmt.Errorf("/proc/%s/status: VmHWM: %w", pid, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/" + pid + "/status: no VmHWM")
}

// Usage is the resource use of a group of processes (the server's nodes,
// or the bench process): the CPU time spent from the first push request
// until the emulator had every message, and the peak RSS.
type Usage struct {
	// Scope says which processes the figures cover.
	Scope string `json:"scope"`
	// Processes is how many processes were measured.
	Processes int `json:"processes"`
	// PeakRSSBytes is the sum of their peak RSS (VmHWM) after delivery;
	// PeakRSSBytesPerProcess lists each one's.
	PeakRSSBytes           int64   `json:"peakRssBytes"`
	PeakRSSBytesPerProcess []int64 `json:"peakRssBytesPerProcess"`
	// CPUSeconds is their CPU time (user + system) over the delivery
	// phase, summed; CPUSecondsPer1000Deliveries divides it by the
	// thousands of messages delivered.
	CPUSeconds                  float64   `json:"cpuSeconds"`
	CPUSecondsPerProcess        []float64 `json:"cpuSecondsPerProcess"`
	CPUSecondsPer1000Deliveries float64   `json:"cpuSecondsPer1000Deliveries"`
}

// usageMeter measures the CPU used by a group of processes between start
// and finish.
type usageMeter struct {
	scope string
	read  func() ([]ProcessUsage, error)
	start []ProcessUsage
}

// begin takes the starting CPU times.
func (m *usageMeter) begin() error {
	u, err := m.read()
	m.start = u
	return err
}

// finish reads the processes again and computes their usage over the
// phase, for delivered messages.
func (m *usageMeter) finish(delivered int) (Usage, error) {
	end, err := m.read()
	if err != nil {
		return Usage{Scope: m.scope}, err
	}
	if len(end) != len(m.start) {
		return Usage{Scope: m.scope}, fmt.Errorf("bench: %d processes at the start, %d at the end", len(m.start), len(end))
	}
	u := Usage{Scope: m.scope, Processes: len(end)}
	for i, e := range end {
		cpu := e.CPUSeconds - m.start[i].CPUSeconds
		u.CPUSeconds += cpu
		u.CPUSecondsPerProcess = append(u.CPUSecondsPerProcess, cpu)
		u.PeakRSSBytes += e.PeakRSSBytes
		u.PeakRSSBytesPerProcess = append(u.PeakRSSBytesPerProcess, e.PeakRSSBytes)
	}
	if delivered > 0 {
		u.CPUSecondsPer1000Deliveries = u.CPUSeconds * 1000 / float64(delivered)
	}
	return u, nil
}

// readSelf reads this process's usage as a group of one.
func readSelf() ([]ProcessUsage, error) {
	u, err := ReadProcessUsage("self")
	return []ProcessUsage{u}, err
}
