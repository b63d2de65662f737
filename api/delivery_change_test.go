package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
)

// gate holds the emulator's answer to the first send of chosen tokens until
// the test releases it, so a test can change a device while a wave of a
// push is in flight, at a known point.
type gate struct {
	arrived map[string]chan struct{}
	release map[string]chan struct{}
	once    map[string]*sync.Once
}

func newGate(tokens ...string) *gate {
	g := &gate{arrived: map[string]chan struct{}{}, release: map[string]chan struct{}{}, once: map[string]*sync.Once{}}
	for _, tok := range tokens {
		g.arrived[tok], g.release[tok], g.once[tok] = make(chan struct{}), make(chan struct{}), &sync.Once{}
	}
	return g
}

// beforeAnswer is the emulator's hook: the first send to a held token
// signals its arrival and waits for its release.
func (g *gate) beforeAnswer(token string) {
	once := g.once[token]
	if once == nil {
		return
	}
	first := false
	once.Do(func() { first = true; close(g.arrived[token]) })
	if first {
		<-g.release[token]
	}
}

// await waits until the first send to token is held.
func (g *gate) await(t *testing.T, token string) {
	t.Helper()
	select {
	case <-g.arrived[token]:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for a send to %s", token)
	}
}

// open lets the held send to token be answered.
func (g *gate) open(token string) { close(g.release[token]) }

// startGated runs the service against an emulator that holds the tokens.
func startGated(t *testing.T, tokens ...string) (*env, *gate) {
	g := newGate(tokens...)
	return start(t, testenv.Options{Emulator: emulator.Options{BeforeAnswer: g.beforeAnswer}}), g
}

// window is a chunk's window of sends in flight: the first wave of a push
// to more users than that holds the first window of them, and the rest
// wait while the send to tok-f0 is held.
const window = delivery.DefaultConcurrency

// fillers registers n users f0…f<n-1>, token tok-f<i>, and returns them.
func (e *env) fillers(a testenv.App, n int) []string {
	e.T.Helper()
	users := make([]string, n)
	for i := range users {
		users[i] = fmt.Sprintf("f%d", i)
		e.Device(a, "dev-"+users[i], "tok-"+users[i], "android", "1.6.0", users[i])
	}
	return users
}

func (e *env) setUser(a testenv.App, deviceID string, userID any) {
	e.T.Helper()
	if _, err := a.Client.SetUserID(context.Background(), deviceID, userID); err != nil {
		e.T.Fatalf("set user of %s to %v: %v", deviceID, userID, err)
	}
}

// TestDeviceHandedOverDuringFanout: a /messages message written for alice
// never reaches her device once it is handed to bob, nor carol's once she
// logs out, while the push's first wave is in flight.
func TestDeviceHandedOverDuringFanout(t *testing.T) {
	t.Parallel()
	e, g := startGated(t, "tok-f0")
	a := e.NewApp(nil)
	users := e.fillers(a, window)
	e.Device(a, "dev-alice", "tok-alice", "android", "1.6.0", "alice")
	e.Device(a, "dev-carol", "tok-carol", "android", "1.6.0", "carol")
	e.Device(a, "dev-bob", "tok-bob", "android", "1.6.0", "bob")
	var msgs []client.Message
	for _, u := range append(users, "alice", "carol") {
		msgs = append(msgs, client.Message{UserID: u, Title: "for " + u, Content: "personal"})
	}
	res, err := a.Client.PushMessages(context.Background(), client.PushMessagesRequest{Messages: msgs})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	g.await(t, "tok-f0") // the first wave (the fillers' messages) is in flight
	e.setUser(a, "dev-alice", "bob")
	e.setUser(a, "dev-carol", nil)
	g.open("tok-f0")
	p := e.WaitFinal(res.PushID, 30*time.Second)

	sent := e.SentTo(res.PushID)
	if sent["tok-alice"] != 0 || sent["tok-carol"] != 0 || sent["tok-bob"] != 0 {
		t.Errorf("messages by token: got %v, want none to the handed-over, logged-out or bob's devices", sent)
	}
	if p.Status != "done" || p.Counts.Sent != window {
		t.Errorf("push: got %s with %+v, want done with %d sent", p.Status, p.Counts, window)
	}
	want := map[string]string{"alice": "NO_TOKEN", "carol": "NO_TOKEN"}
	if got := p.Unreachable(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unreachable: got %v, want %v", got, want)
	}
}

// TestTokenRefreshedDuringFanout: a user whose token is refreshed (same
// device, new token) or whose app is reinstalled (same token, new device)
// while the push fans out gets the message once, on the token held at send
// time, and is not reported unreachable.
func TestTokenRefreshedDuringFanout(t *testing.T) {
	t.Parallel()
	e, g := startGated(t, "tok-f0")
	a := e.NewApp(nil)
	users := e.fillers(a, window)
	e.Device(a, "dev-alice", "tok-alice-1", "android", "1.6.0", "alice")
	e.Device(a, "dev-dan", "tok-dan", "ios", "1.6.0", "dan")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: append(anys(users), "alice", "dan"), Title: "t", Content: "c"})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	g.await(t, "tok-f0")
	e.Device(a, "dev-alice", "tok-alice-2", "android", "1.6.0", "alice") // refresh
	e.Device(a, "dev-dan-2", "tok-dan", "ios", "1.6.0", "dan")           // reinstall
	g.open("tok-f0")
	p := e.WaitFinal(res.PushID, 30*time.Second)

	sent := e.SentTo(res.PushID)
	if sent["tok-alice-2"] != 1 || sent["tok-alice-1"] != 0 || sent["tok-dan"] != 1 || len(sent) != window+2 {
		t.Errorf("messages: got alice-2 %d, alice-1 %d, dan %d, %d tokens; want 1, 0, 1, %d",
			sent["tok-alice-2"], sent["tok-alice-1"], sent["tok-dan"], len(sent), window+2)
	}
	if p.Status != "done" || p.Counts.Sent != window+2 || len(p.UnreachableUsers) != 0 {
		t.Errorf("push: got %s, %+v, unreachable %v; want done, %d sent, none unreachable", p.Status, p.Counts, p.UnreachableUsers, window+2)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestAccessTokenRevokedDuringPush: FCM answering 401 UNAUTHENTICATED to a
// stale access token (its front end restarted) costs nothing: the token is
// dropped, a fresh one fetched and every send retried on it.
func TestAccessTokenRevokedDuringPush(t *testing.T) {
	t.Parallel()
	e, g := startGated(t, "tok-f0")
	a := e.NewApp(nil)
	users := e.fillers(a, 120)
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: anys(users), Title: "t", Content: "c"})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	g.await(t, "tok-f0")
	e.Emulator.RevokeTokens() // the waves after the first meet a revoked token
	g.open("tok-f0")
	p := e.WaitFinal(res.PushID, 30*time.Second)
	if p.Status != "done" || p.Counts.Sent != 120 || p.Counts.Failed != 0 {
		t.Errorf("push: got %s %q, %+v; want done with 120 sent", p.Status, p.FailureReason, p.Counts)
	}
	sent := e.SentTo(res.PushID)
	for _, u := range users {
		if sent["tok-"+u] != 1 {
			t.Fatalf("messages to tok-%s: got %d, want 1", u, sent["tok-"+u])
		}
	}
	if got := e.Emulator.TokenGrants(); got != 2 {
		t.Errorf("access tokens issued: got %d, want 2 (the first, one fresh)", got)
	}

	t.Run("FreshTokenRefused", func(t *testing.T) {
		b := e.NewAppWithoutFCM(nil)
		e.PutCredentials(b, "revoked-project") // FCM refuses every token of it
		e.Device(b, "dev-x", "tok-x", "android", "1.6.0", "x")
		res, err := b.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"x"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: %v", err)
		}
		p := e.WaitFinal(res.PushID, 30*time.Second)
		if p.Status != "failed" || !strings.Contains(p.FailureReason, "fresh access token was refused") {
			t.Errorf("push: got %s %q, want failed because a fresh token was refused", p.Status, p.FailureReason)
		}
	})
}

// dashboardPage signs in to the dashboard with the admin token and returns
// the page at path.
func (e *env) dashboardPage(path string) string {
	e.T.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(e.Admin.URL+"/login", url.Values{"token": {testenv.AdminToken}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		e.T.Fatalf("dashboard login: got %v %v, want 303", resp, err)
	}
	resp.Body.Close()
	resp, err = hc.Get(e.Admin.URL + path)
	if err != nil {
		e.T.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
