package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchCleanupTimeout bounds each wait of the clean-up tests: for the bench
// to start its server, and for it and its server to end after a signal.
const benchCleanupTimeout = 2 * time.Minute

// TestBenchStopsItsServer interrupts `herald bench` once its `herald serve`
// process is up and checks that the process ends and its data directory is
// removed: Ctrl-C (SIGINT to the process group, as a terminal sends it),
// SIGTERM to the bench alone, and SIGKILL (no clean-up can run: the kernel
// ends the server with its parent; the directory stays).
func TestBenchStopsItsServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs bench with a server process")
	}
	bin := buildHerald(t)
	for _, tc := range []struct {
		name       string
		sig        syscall.Signal
		group      bool
		dirRemoved bool
	}{
		{"CtrlC", syscall.SIGINT, true, true},
		{"SIGTERM", syscall.SIGTERM, false, true},
		{"SIGKILL", syscall.SIGKILL, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startBenchProcess(t, bin)
			pid, dir := b.awaitNode()
			target := b.cmd.Process.Pid
			if tc.group {
				target = -target
			}
			if err := syscall.Kill(target, tc.sig); err != nil {
				t.Fatal(err)
			}
			b.awaitExit()
			awaitGone(t, pid)
			if _, err := os.Stat(dir); tc.dirRemoved && !os.IsNotExist(err) {
				t.Errorf("data directory %s: got %v, want it removed\nbench stderr:\n%s", dir, err, b.stderr.String())
			}
		})
	}
}

// TestBenchServerFailsToStart: a server binary that exits at once fails
// the run with an error naming it, and leaves no data directory behind.
func TestBenchServerFailsToStart(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"bench", "--users", "10", "--binary", "/bin/false"}, os.Getenv, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "exited at start") {
		t.Fatalf("got %v, want the node's exit at start\nstderr:\n%s", err, stderr.String())
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "herald-bench-*"))
	if len(left) != 0 {
		t.Errorf("got %v left in TMPDIR, want none", left)
	}
}

// benchProcess is `herald bench` running as a process of its own.
type benchProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr *syncBuffer
	lines  chan string
	exited chan struct{}
}

// startBenchProcess runs `herald bench` with more users than it can
// register before the test interrupts it, in a process group of its own,
// its temporary directories under a test directory.
func startBenchProcess(t *testing.T, bin string) *benchProcess {
	t.Helper()
	b := &benchProcess{t: t, stderr: newSyncBuffer(), lines: make(chan string, 64), exited: make(chan struct{})}
	b.cmd = exec.Command(bin, "bench", "--users", "1000000")
	b.cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	// Its own group, so that a Ctrl-C to the group reaches it and its
	// server only; killed with the test binary if that dies first.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pipe, err := b.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(b.stderr, sc.Text())
			select {
			case b.lines <- sc.Text():
			default: // nobody waits for lines any more
			}
		}
		b.cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
	})
	return b
}

var nodeLine = regexp.MustCompile(`node 1: pid (\d+), data directory (\S+)`)

// awaitNode waits until the bench's server is up and registrations begin,
// and returns the server's pid and data directory.
func (b *benchProcess) awaitNode() (int, string) {
	b.t.Helper()
	timeout := time.After(benchCleanupTimeout)
	pid, dir := 0, ""
	for {
		select {
		case line := <-b.lines:
			if m := nodeLine.FindStringSubmatch(line); m != nil {
				pid, _ = strconv.Atoi(m[1])
				dir = m[2]
			}
			if strings.Contains(line, "registering") && pid != 0 {
				return pid, dir
			}
		case <-b.exited:
			b.t.Fatalf("bench exited before registering\nstderr:\n%s", b.stderr.String())
		case <-timeout:
			b.t.Fatalf("bench did not start registering within %v\nstderr:\n%s", benchCleanupTimeout, b.stderr.String())
		}
	}
}

// awaitExit waits until the bench process has ended.
func (b *benchProcess) awaitExit() {
	b.t.Helper()
	select {
	case <-b.exited:
	case <-time.After(benchCleanupTimeout):
		b.t.Fatalf("bench still running %v after the signal\nstderr:\n%s", benchCleanupTimeout, b.stderr.String())
	}
}

// awaitGone polls until process pid has ended (gone, or a zombie no one
// reaped yet).
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(benchCleanupTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !processEnded(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still running %v after the bench ended", pid, benchCleanupTimeout)
		}
		<-tick.C
	}
}

// processEnded reports whether pid has no running process.
func processEnded(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(raw, ')')
	return i >= 0 && len(raw) > i+2 && raw[i+2] == 'Z'
}
