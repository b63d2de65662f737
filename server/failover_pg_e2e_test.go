package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestFailoverPostgres (PostgreSQL binaries): two nodes on a primary with
// a synchronous standby, reached through a multi-host URL with
// target_session_attrs=read-write, as docs/operations.md sets them up.
// The primary is SIGKILLed a quarter into a 2,000-token push and the
// standby promoted 3 s later, and in a second case 30 s later (past a
// request's write retries): requests during the gap are answered 503
// within 10 s; the service is back within 15 s of the promotion without
// a restart of Herald; every push accepted before the kill is delivered
// to every token, and a token gets a second message only where a resend
// is recorded.
func TestFailoverPostgres(t *testing.T) {
	pgtest.BaseURL(t) // where PostgreSQL is set up for the tests, its binaries are too
	if testing.Short() {
		t.Skip("starts a primary and a standby, kills the primary mid-push")
	}
	for _, gap := range []time.Duration{3 * time.Second, 30 * time.Second} {
		t.Run(gap.String(), func(t *testing.T) {
			t.Parallel()
			failover(t, gap)
		})
	}
}

// failover runs TestFailoverPostgres with the standby promoted gap after
// the primary's death.
func failover(t *testing.T, gap time.Duration) {
	bin := pgBinDir(t)
	dir := pgScratch(t)
	primary := &pgCluster{t: t, bin: bin, dir: filepath.Join(dir, "primary"), port: freePort(t)}
	standby := &pgCluster{t: t, bin: bin, dir: filepath.Join(dir, "standby"), port: freePort(t)}
	primary.initPrimary()
	standby.initStandby(primary)
	primary.waitSync("standby")

	url := fmt.Sprintf("postgres://herald@127.0.0.1:%d,127.0.0.1:%d/herald?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.port, standby.port)
	e := start(t, testenv.Options{DatabaseURL: url, Emulator: emulator.Options{Latency: 100 * time.Millisecond}})
	second := start(t, testenv.Options{DatabaseURL: url, MasterKey: e.MasterKey, EmulatorOf: e.Env})

	a := e.NewApp(nil)
	const users, perPush = 2000, 500
	ids := make([]string, users)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%d", i)
	}
	began := time.Now()
	e.Register(a, "tok-", ids...)
	t.Logf("%d users registered in %v", users, time.Since(began).Round(time.Millisecond))
	failoverRound(t, e, a, ids, perPush, primary, standby, gap)
	if gap > 10*time.Second {
		return
	}
	// The old primary rejoins as the new one's synchronous standby
	// (pg_rewind), and a second failover moves the service back to it.
	primary.rejoin(standby)
	standby.waitSync("primary")
	failoverRound(t, e, a, ids, perPush, standby, primary, gap)
	if t.Failed() {
		for i, node := range []*env{e, second} {
			for _, line := range strings.Split(node.Log.String(), "\n") {
				if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
					t.Logf("node %d: %s", i+1, line)
				}
			}
		}
	}
}

// failoverRound sends a push to every user, perPush a request, kills dying
// (the primary) a quarter into it and promotes next gap later, then checks
// the gap's answers, the service's return and every push's delivery.
func failoverRound(t *testing.T, e *env, a testenv.App, ids []string, perPush int, dying, next *pgCluster, gap time.Duration) {
	t.Helper()
	before := e.Emulator.Stats().Accepted
	var pushIDs []string
	for start := 0; start < len(ids); start += perPush {
		us := make([]any, perPush)
		for i := range us {
			us[i] = ids[start+i]
		}
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: us, Title: "failover", Content: "c"})
		if err != nil {
			t.Fatalf("push: %v", err)
		}
		pushIDs = append(pushIDs, res.PushID)
	}
	testenv.WaitFor(t, "a quarter of the messages", time.Minute, func() bool { return e.Emulator.Stats().Accepted >= before+len(ids)/4 })
	dying.kill()
	killedAt := time.Now()
	t.Logf("primary killed after %d of %d messages", e.Emulator.Stats().Accepted-before, len(ids))

	// During the gap: a request is answered 503 within 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u0"}, Title: "gap", Content: "c"})
	cancel()
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable || ce.Code != "ERR-AB-SYS-01" || ce.RetryAfter <= 0 {
		t.Errorf("push during the gap: got %v, want 503 ERR-AB-SYS-01 with Retry-After within 10 s", err)
	}
	t.Logf("answered in the gap after %v", time.Since(killedAt).Round(time.Millisecond))

	if wait := time.Until(killedAt.Add(gap)); wait > 0 {
		time.Sleep(wait) // the gap's length, not a wait for work
	}
	next.promote()
	promotedAt := time.Now()
	testenv.WaitFor(t, "a push accepted after the promotion", 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "back", Content: "c"})
		return err == nil
	})
	t.Logf("service back %v after the promotion", time.Since(promotedAt).Round(time.Millisecond))

	for _, id := range pushIDs {
		p := e.WaitFinal(id, 2*time.Minute)
		if p.Status != "done" || p.Counts.Sent != perPush {
			t.Errorf("push %s: got %s with %d sent (%s), want done with %d", id, p.Status, p.Counts.Sent, p.FailureReason, perPush)
		}
	}
	t.Logf("every push finished %v after the promotion", time.Since(promotedAt).Round(time.Millisecond))
	var resent int
	if err := e.QueryRow(`SELECT count(*) FROM deliveries WHERE resent AND push_id = ANY($1)`, pushIDs).Scan(&resent); err != nil {
		t.Fatal(err)
	}
	twice := 0
	for _, id := range pushIDs {
		got := e.SentTo(id)
		if len(got) != perPush {
			t.Errorf("push %s: %d tokens reached, want %d", id, len(got), perPush)
		}
		for _, n := range got {
			twice += n - 1
		}
	}
	if twice > resent {
		t.Errorf("%d second messages, but %d resends recorded", twice, resent)
	}
	t.Logf("resends recorded: %d; second messages: %d", resent, twice)
}

// pgCluster is a PostgreSQL cluster the test runs on loopback, as the
// postgres user when the test runs as root (initdb refuses root).
type pgCluster struct {
	t    *testing.T
	bin  string
	dir  string
	port int
}

// command is one of PostgreSQL's programs, run as the postgres user when
// the test runs as root.
func (c *pgCluster) command(name string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, name)}, args...)...)
	}
	return exec.Command(filepath.Join(c.bin, name), args...)
}

func (c *pgCluster) run(name string, args ...string) string {
	c.t.Helper()
	cmd := c.command(name, args...)
	// Output goes to a file, not a pipe: a server pg_ctl starts keeps the
	// descriptors it was given, and a pipe would never end.
	f, err := os.CreateTemp("", "herald-failover-out-")
	if err != nil {
		c.t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *pgCluster) conf(lines ...string) {
	c.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.dir, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *pgCluster) start() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.dir, "-l", c.dir+".log", "-w", "-t", "30", "start")
	c.t.Cleanup(func() { c.command("pg_ctl", "-D", c.dir, "-m", "immediate", "stop").Run() }) // already stopped when killed
}

func (c *pgCluster) common() []string {
	return []string{
		fmt.Sprintf("port = %d", c.port), "listen_addresses = '127.0.0.1'",
		fmt.Sprintf("unix_socket_directories = '%s'", filepath.Dir(c.dir)),
		"fsync = off",             // SIGKILL keeps the page cache: what was committed stays
		"wal_keep_size = '256MB'", // pg_rewind reads the old WAL back to where the two diverged
	}
}

// initPrimary makes the primary, with the database herald owned by the
// superuser herald.
func (c *pgCluster) initPrimary() {
	c.run("initdb", "-D", c.dir, "-U", "herald", "--auth=trust", "-E", "UTF8", "--no-sync")
	c.conf(append(c.common(), "wal_level = replica", "max_wal_senders = 5", "wal_log_hints = on")...)
	c.start()
	c.run("createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "herald", "herald")
}

// psql runs a statement on the cluster's database herald.
func (c *pgCluster) psql(stmt string) string {
	c.t.Helper()
	return c.run("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "herald", "-d", "herald", "-Atc", stmt)
}

// initStandby copies the primary (pg_basebackup) and follows it.
func (c *pgCluster) initStandby(primary *pgCluster) {
	c.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port), "-U", "herald", "-D", c.dir, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")
	c.conf(append(c.common(),
		fmt.Sprintf("primary_conninfo = 'host=127.0.0.1 port=%d user=herald application_name=standby'", primary.port))...)
	c.start()
}

// waitSync makes the standby the primary's synchronous one (a commit
// waits for it from then on) and waits until it is.
func (c *pgCluster) waitSync(name string) {
	c.t.Helper()
	c.psql("ALTER SYSTEM SET synchronous_standby_names = '" + name + "'")
	c.psql("SELECT pg_reload_conf()")
	testenv.WaitFor(c.t, "the standby in sync", 30*time.Second, func() bool {
		out := c.psql("SELECT sync_state FROM pg_stat_replication WHERE application_name = '" + name + "'")
		return strings.TrimSpace(out) == "sync"
	})
}

// kill SIGKILLs the cluster's postmaster and every process it started,
// at once, as the death of its machine would: a backend left running for
// a moment would still commit what it was given.
func (c *pgCluster) kill() {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "postmaster.pid"))
	if err != nil {
		c.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		c.t.Fatal(err)
	}
	children := childrenOf(pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	for _, child := range children {
		syscall.Kill(child, syscall.SIGKILL) // one may have ended already
	}
}

// childrenOf lists the processes whose parent is pid (/proc).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so split after ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(filepath.Base(filepath.Dir(st))); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

// rejoin brings a primary that died back as a standby of the one that
// took over: pg_rewind (which first completes the dead one's crash
// recovery), then standby.signal and primary_conninfo.
func (c *pgCluster) rejoin(primary *pgCluster) {
	c.t.Helper()
	// A standby just promoted writes its new timeline into its control
	// file at its first checkpoint; before it, pg_rewind would find no
	// divergence and rewind nothing.
	primary.psql("CHECKPOINT")
	c.run("pg_rewind", "--target-pgdata="+c.dir,
		fmt.Sprintf("--source-server=host=127.0.0.1 port=%d user=herald dbname=herald", primary.port))
	if err := os.WriteFile(filepath.Join(c.dir, "standby.signal"), nil, 0o600); err != nil {
		c.t.Fatal(err)
	}
	// pg_rewind copied the new primary's configuration: this one's own
	// port and directories again, and who to follow.
	c.conf(append(c.common(),
		fmt.Sprintf("primary_conninfo = 'host=127.0.0.1 port=%d user=herald application_name=primary'", primary.port))...)
	c.start()
}

func (c *pgCluster) promote() { c.run("pg_ctl", "-D", c.dir, "-w", "promote") }

// pgBinDir finds PostgreSQL's server binaries, or skips.
func pgBinDir(t *testing.T) string {
	t.Helper()
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); fileExists(filepath.Join(dir, "initdb")) {
			return dir
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		t.Skip("PostgreSQL's server binaries (initdb, pg_ctl, pg_basebackup) are not installed: the failover test did not run")
	}
	return filepath.Dir(matches[len(matches)-1])
}

// pgScratch is a directory for the clusters, the postgres user's when the
// test runs as root.
func pgScratch(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "herald-failover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Cleanup(func() { // the servers' logs, when the test failed
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", filepath.Base(l), b[max(0, len(b)-3000):])
		}
	})
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			t.Skip("running as root without runuser: initdb cannot be run as another user")
		}
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root with no postgres user to run initdb as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
