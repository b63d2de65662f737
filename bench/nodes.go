package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NodesConfig says how to run the server as `herald serve` processes.
type NodesConfig struct {
	// Binary is the herald executable the nodes run.
	Binary string
	// Count is the number of processes; more than one needs a database
	// they share (HERALD_DATABASE_URL in Env).
	Count int
	// Env holds the HERALD_* settings every node shares: database,
	// secrets, FCM endpoint, limits. Each node gets both listeners on a
	// loopback port of its own and a data directory of its own; no other
	// HERALD_* variable of the bench's environment reaches it.
	Env []string
	// AdminToken is the HERALD_ADMIN_TOKEN of Env, for the admin calls.
	AdminToken string
	// Engine names the store, for the report.
	Engine string
	// Log receives the nodes' stderr, each line prefixed with its node.
	Log io.Writer
}

// Node start and stop bounds.
const (
	nodeStartTimeout = 2 * time.Minute // migrations of a fresh database included
	nodeStopTimeout  = time.Minute
	readyPoll        = 50 * time.Millisecond
)

// StartNodes starts cfg.Count `herald serve` processes and waits until each
// answers /readyz. Its Server's Stop ends them with SIGTERM and removes
// their data directories.
func StartNodes(ctx context.Context, cfg NodesConfig) (Server, error) {
	if cfg.Count < 1 {
		return Server{}, errors.New("bench: nodes: count must be at least 1")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	log := &lockedWriter{w: cfg.Log}
	nodes := make([]*node, cfg.Count)
	errs := make([]error, cfg.Count)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = startNode(ctx, cfg, i+1, log) })
	}
	wg.Wait()
	srv := Server{AdminToken: cfg.AdminToken, Engine: cfg.Engine}
	srv.Stop = func() error { return stopNodes(nodes) }
	if err := errors.Join(errs...); err != nil {
		return Server{}, errors.Join(err, srv.Stop())
	}
	srv.PublicURL, srv.AdminURL = nodes[0].publicURL, nodes[0].adminURL
	for _, n := range nodes {
		srv.PublicURLs = append(srv.PublicURLs, n.publicURL)
	}
	srv.Processes = func() ([]ProcessUsage, error) {
		out := make([]ProcessUsage, len(nodes))
		for i, n := range nodes {
			u, err := ReadProcessUsage(strconv.Itoa(n.cmd.Process.Pid))
			if err != nil {
				return nil, fmt.Errorf("node %d: %w", i+1, err)
			}
			out[i] = u
		}
		return out, nil
	}
	return srv, nil
}

// node is one running `herald serve`.
type node struct {
	n                   int
	cmd                 *exec.Cmd
	dir                 string
	exited              chan struct{}
	publicURL, adminURL string
}

// listening is the line serve prints once both listeners are up.
var listening = regexp.MustCompile(`public API on (\S+), admin on (\S+)`)

// startNode starts node n and waits until it is ready. A node that fails
// to start is returned too, for stopNodes to clean up.
func startNode(ctx context.Context, cfg NodesConfig, n int, log io.Writer) (*node, error) {
	dir, err := os.MkdirTemp("", "herald-bench-node-")
	if err != nil {
		return nil, err
	}
	nd := &node{n: n, dir: dir, exited: make(chan struct{})}
	nd.cmd = exec.Command(cfg.Binary, "serve")
	nd.cmd.Env = nodeEnv(cfg.Env, dir)
	nd.cmd.Stderr = &prefixWriter{prefix: fmt.Sprintf("node %d: ", n), w: log}
	dieWithBench(nd.cmd)
	stdout, err := nd.cmd.StdoutPipe()
	if err != nil {
		return nd, err
	}
	if err := nd.cmd.Start(); err != nil {
		nd.cmd = nil
		return nd, fmt.Errorf("bench: node %d: %w", n, err)
	}
	fmt.Fprintf(log, "bench: node %d: pid %d, data directory %s\n", n, nd.cmd.Process.Pid, dir)
	addrs := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1:]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { nd.cmd.Wait(); close(nd.exited) }()
	timer := time.NewTimer(nodeStartTimeout)
	defer timer.Stop()
	select {
	case a := <-addrs:
		nd.publicURL, nd.adminURL = a[0], a[1]
	case <-nd.exited:
		return nd, fmt.Errorf("bench: node %d exited at start (%v); its log is above", n, nd.cmd.ProcessState)
	case <-timer.C:
		return nd, fmt.Errorf("bench: node %d printed no addresses within %v", n, nodeStartTimeout)
	case <-ctx.Done():
		return nd, context.Cause(ctx)
	}
	return nd, nd.awaitReady(ctx, timer.C)
}

// nodeEnv is the process environment of a node: the bench's own without
// its HERALD_* variables, then shared, then the node's listeners and data
// directory.
func nodeEnv(shared []string, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			env = append(env, kv)
		}
	}
	env = append(env, shared...)
	return append(env, "HERALD_ADDR=127.0.0.1:0", "HERALD_ADMIN_ADDR=127.0.0.1:0", "HERALD_DATA_DIR="+dir)
}

// awaitReady polls the node's /readyz until it answers 200.
func (nd *node) awaitReady(ctx context.Context, timeout <-chan time.Time) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		resp, err := hc.Get(nd.publicURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-tick.C:
		case <-nd.exited:
			return fmt.Errorf("bench: node %d exited before it was ready; its log is above", nd.n)
		case <-timeout:
			return fmt.Errorf("bench: node %d not ready within %v", nd.n, nodeStartTimeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// stopNodes ends every node with SIGTERM (SIGKILL after a minute), waits
// for them and removes their data directories.
func stopNodes(nodes []*node) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, nd := range nodes {
		if nd == nil {
			continue
		}
		wg.Go(func() { errs[i] = nd.stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stop ends the node and removes its data directory.
func (nd *node) stop() error {
	var err error
	if nd.cmd != nil {
		err = nd.terminate()
	}
	return errors.Join(err, os.RemoveAll(nd.dir))
}

// terminate sends SIGTERM and waits for a clean exit.
func (nd *node) terminate() error {
	select {
	case <-nd.exited:
		return nil // exited already (at start, or on the terminal's Ctrl-C)
	default:
	}
	nd.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(nodeStopTimeout)
	defer timer.Stop()
	select {
	case <-nd.exited:
	case <-timer.C:
		nd.cmd.Process.Kill()
		<-nd.exited
		return fmt.Errorf("bench: node %d did not stop within %v of SIGTERM: killed", nd.n, nodeStopTimeout)
	}
	if code := nd.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("bench: node %d exited with %d after SIGTERM; its log is above", nd.n, code)
	}
	return nil
}

// lockedWriter serialises writes from several nodes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes each whole line with prefix; a partial line waits
// for its end.
type prefixWriter struct {
	prefix string
	w      io.Writer
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append([]byte(p.prefix), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
}
