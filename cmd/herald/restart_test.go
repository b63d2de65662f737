package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
)

// buildHerald builds the herald binary, once for the whole test binary
// (each test that runs it used to link its own copy, seconds of both
// cores each time), into a directory TestMain removes.
func buildHerald(t *testing.T) string {
	t.Helper()
	built.once.Do(func() { built.bin, built.err = buildHeraldIn(built.dir) })
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// built is the binary buildHerald built.
var built struct {
	once sync.Once
	dir  string // set by TestMain
	bin  string
	err  error
}

// buildHeraldIn builds the herald binary into dir.
func buildHeraldIn(dir string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	bin := filepath.Join(dir, "herald")
	build := exec.Command("go", "build", "-o", bin, "./cmd/herald")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// parallelTests is how many parallel tests run at once by default. The end-to-end
// tests spend much of their time waiting (a scheduled send's run-up, the
// emulator's latency, a process starting), so more of them than cores
// (go test's default, GOMAXPROCS) keeps the cores busy: on 2 cores the
// package ran in 125 s at 4 against 175 s at 2.
const parallelTests = 4

// TestMain gives buildHerald its directory and removes it after the
// tests, and runs more parallel tests than go test's default (see
// parallelTests) unless -parallel is given.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(max(parallelTests, runtime.GOMAXPROCS(0)))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "herald-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	built.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a `herald serve` subprocess.
type process struct {
	t         *testing.T
	cmd       *exec.Cmd
	publicURL string
	adminURL  string
	stderr    *syncBuffer
	exited    chan struct{}
}

var listeningLine = regexp.MustCompile(`public API on (\S+), admin on (\S+)`)

// startProcess runs `herald serve` on dataDir with both listeners on port
// 0, and the extra HERALD_* settings env, reads the addresses it prints and
// waits until it is ready.
func startProcess(t *testing.T, bin, dataDir, adminToken, fcmEndpoint string, env ...string) *process {
	t.Helper()
	p := &process{t: t, stderr: newSyncBuffer(), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env,
		"HERALD_DATA_DIR="+dataDir, "HERALD_ADDR=127.0.0.1:0", "HERALD_ADMIN_ADDR=127.0.0.1:0",
		"HERALD_ADMIN_TOKEN="+adminToken, "HERALD_FCM_ENDPOINT="+fcmEndpoint,
		"HERALD_FCM_ALLOW_ANY_TOKEN_URI=true", "HERALD_LOG_LEVEL=warn",
		// The tests register thousands of devices from one address.
		"HERALD_SDK_RATE_LIMIT=0", "HERALD_SDK_CLIENT_RATE_LIMIT=0")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start herald: %v", err)
	}
	addrs := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1:]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	select {
	case a := <-addrs:
		p.publicURL, p.adminURL = a[0], a[1]
	case <-p.exited:
		t.Fatalf("herald exited at start: %s", p.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("herald printed no addresses within 30s: %s", p.stderr.String())
	}
	waitFor(t, "/readyz", 30*time.Second, func() bool {
		resp, err := http.Get(p.adminURL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// processApp is an app created in a `herald serve` subprocess.
type processApp struct{ AppID, APIKey, SecretKey string }

// newApp creates an app named name through the process's admin API, with
// FCM credentials for the emulator at emuURL.
func (p *process) newApp(adminToken, name, emuURL string) processApp {
	p.t.Helper()
	var app processApp
	if code := p.adminJSON(adminToken, "POST", "/admin/v1/apps", []byte(`{"name":"`+name+`"}`), &app); code != http.StatusCreated {
		p.t.Fatalf("create app: got %d, want 201", code)
	}
	creds := fcmtest.ServiceAccountJSON(p.t, "proj-"+name, emuURL+"/token")
	if code := p.adminJSON(adminToken, "PUT", "/admin/v1/apps/"+app.AppID+"/fcm-credentials", creds, nil); code != http.StatusOK {
		p.t.Fatalf("put credentials: got %d, want 200", code)
	}
	return app
}

// kill ends the process with SIGKILL: no shutdown, no cleanup.
func (p *process) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("kill: %v", err)
	}
	<-p.exited
}

// stop ends the process with SIGTERM and waits for its graceful shutdown.
func (p *process) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("terminate: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("herald did not stop within 60s after SIGTERM")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Errorf("exit code after SIGTERM: got %d, want 0: %s", code, p.stderr.String())
	}
}

// adminJSON calls the process's admin API and decodes the answer into out.
func (p *process) adminJSON(token, method, path string, body []byte, out any) int {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.adminURL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			p.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// TestCrashRestartSendsEachTokenOnce kills the server with SIGKILL in the
// middle of a 20,000-token fan-out, restarts it on the same data directory
// and checks that every token got its message exactly once, except tokens
// whose send was in flight at the kill, which the server records as resent.
func TestCrashRestartSendsEachTokenOnce(t *testing.T) {
	testenv.SQLiteOnly(t, "a crash of the one process on the embedded store; TestNodes covers PostgreSQL")
	testenv.Long(t, "builds the binary and sends 20,000 messages through a crash")
	t.Parallel() // its own process, data dir and emulator
	const (
		users      = 20000
		perPush    = 500
		killAfter  = 3000
		adminToken = "ha_crashTestAdminToken0123456789abcdefghij"
	)
	// maxInFlight is the most sends one process has in flight and
	// uncommitted: the send queue's workers × a window each.
	maxInFlight := delivery.MaxInFlight()
	bin := buildHerald(t)
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{Latency: 2 * time.Millisecond})
	dataDir := t.TempDir()
	proc := startProcess(t, bin, dataDir, adminToken, emuURL)
	app := proc.newApp(adminToken, "crash", emuURL)
	c := client.New(proc.publicURL, app.APIKey, app.SecretKey, nil)
	began := time.Now()
	registerAll(t, c, users, 32)
	t.Logf("registered %d users in %s", users, time.Since(began).Round(time.Millisecond))

	// The pushes are sent while delivery runs, and the kill may come before
	// the last is accepted: each carries an Idempotency-Key, so sending them
	// all again after the restart adds only the ones never accepted.
	pushes := users / perPush
	sendPushes := func(c *client.Client) ([]string, error) {
		ids := make([]string, 0, pushes)
		for n := range pushes {
			userIDs := make([]any, perPush)
			for i := range userIDs {
				userIDs[i] = fmt.Sprintf("u%d", n*perPush+i)
			}
			ctx := client.WithIdempotencyKey(context.Background(), fmt.Sprintf("crash-push-%d", n))
			res, err := c.PushUsers(ctx, client.PushUsersRequest{UserIDs: userIDs, Title: "crash", Content: "once"})
			if err != nil {
				return ids, fmt.Errorf("push %d: %w", n, err)
			}
			ids = append(ids, res.PushID)
		}
		return ids, nil
	}
	type sent struct {
		ids []string
		err error
	}
	before := make(chan sent, 1)
	go func() {
		ids, err := sendPushes(c)
		before <- sent{ids, err}
	}()
	waitFor(t, fmt.Sprintf("%d accepted messages", killAfter), 60*time.Second, func() bool { return emu.Stats().Accepted >= killAfter })
	proc.kill()
	atKill := emu.Stats().Accepted
	if atKill >= users {
		t.Fatalf("accepted at kill: got %d, want fewer than %d (the fan-out ended before the kill)", atKill, users)
	}
	first := <-before
	t.Logf("killed with %d of %d messages accepted and %d of %d pushes answered (%v)", atKill, users, len(first.ids), pushes, first.err)

	proc = startProcess(t, bin, dataDir, adminToken, emuURL)
	ids, err := sendPushes(client.New(proc.publicURL, app.APIKey, app.SecretKey, nil))
	if err != nil {
		t.Fatalf("pushes after restart: %v", err)
	}
	for i, id := range first.ids {
		if ids[i] != id {
			t.Errorf("push %d after restart: got X-Push-Id %s, want the replayed %s", i, ids[i], id)
		}
	}
	waitFor(t, "every token to get a message", 90*time.Second, func() bool { return len(emu.CountByToken()) == users })
	var list struct {
		Pushes []struct{ PushID, Status string }
	}
	waitFor(t, "every push to be done", 30*time.Second, func() bool {
		proc.adminJSON(adminToken, "GET", "/admin/v1/apps/"+app.AppID+"/pushes?limit=200", nil, &list)
		for _, p := range list.Pushes {
			if p.Status != "done" {
				return false
			}
		}
		return len(list.Pushes) == pushes
	})
	proc.stop()

	resent := resentTokens(t, filepath.Join(dataDir, "herald.db"))
	counts := emu.CountByToken()
	dups, wrong := 0, 0
	for token, n := range counts {
		switch {
		case n == 1:
		case n == 2 && resent[token]:
			dups++
		default:
			if wrong++; wrong <= 10 {
				t.Errorf("token %s: got %d messages, want 1 (resent recorded: %v)", token, n, resent[token])
			}
		}
	}
	if wrong > 0 {
		t.Errorf("tokens sent more than once without a resent record: got %d, want 0", wrong)
	}
	if len(counts) != users {
		t.Errorf("tokens reached: got %d, want %d", len(counts), users)
	}
	// Deliveries are marked in flight a wave at a time, and a wave's
	// outcomes are committed together: only the waves under way at the
	// kill are resent, and only their tokens can be sent twice.
	if len(resent) > maxInFlight {
		t.Errorf("deliveries recorded as resent: got %d (%d sent twice), want at most %d (the waves in flight at the kill)",
			len(resent), dups, maxInFlight)
	}
	t.Logf("resent recorded: %d tokens; sent twice: %d tokens", len(resent), dups)
}

// registerAll registers users u0…u(n-1), one device and token each, with
// bounded concurrency.
func registerAll(t *testing.T, c *client.Client, n, workers int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				_, err := c.RegisterPushToken(context.Background(), client.RegisterRequest{
					DeviceID: fmt.Sprintf("d%d", i), Token: fmt.Sprintf("crash-%d", i), Platform: "android",
					AppSourceVersion: "1.6.0", UserID: fmt.Sprintf("u%d", i),
				})
				if err != nil {
					errs <- fmt.Errorf("register u%d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// resentTokens reads, from the stopped server's database, the tokens whose
// delivery was recorded as resent.
func resentTokens(t *testing.T, path string) map[string]bool {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT token FROM deliveries WHERE resent = 1`)
	if err != nil {
		t.Fatalf("query resent: %v", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var token string
		if err := rows.Scan(&token); err != nil {
			t.Fatal(err)
		}
		out[token] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
