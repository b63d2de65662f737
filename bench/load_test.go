package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/heraldpush/herald/client"
)

// fakeNode answers the two endpoints the load uses and records which
// users it was asked about.
type fakeNode struct {
	mu         sync.Mutex
	registered []string
	pushed     []string // the first user of each push request
}

func (n *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		UserID  string `json:"userId"`
		UserIDs []string
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/sdk/v2/push-token":
		n.registered = append(n.registered, body.UserID)
		w.Write([]byte(`{}`))
	case "/api/push/v2/users":
		n.pushed = append(n.pushed, body.UserIDs[0])
		w.Header().Set("X-Push-Id", "p")
		w.Write([]byte(`"Push has been requested to be sent."`))
	default:
		http.NotFound(w, r)
	}
}

// TestLoadSpreadOverNodes checks that registrations and push requests go
// to every node in turn.
func TestLoadSpreadOverNodes(t *testing.T) {
	t.Parallel()
	fakes := make([]*fakeNode, 3)
	var clients []*client.Client
	for i := range fakes {
		fakes[i] = &fakeNode{}
		srv := httptest.NewServer(fakes[i])
		t.Cleanup(srv.Close)
		clients = append(clients, client.New(srv.URL, "k", "s", nil))
	}
	ctx := context.Background()
	if _, err := register(ctx, clients, 9, 4); err != nil {
		t.Fatal(err)
	}
	users := 5 * usersPerRequest
	if _, _, err := pushAll(ctx, clients, users, 2); err != nil {
		t.Fatal(err)
	}
	for k, f := range fakes {
		if len(f.registered) != 3 {
			t.Errorf("node %d: registered %v, want 3 users", k, f.registered)
		}
		for _, u := range f.registered {
			if i := atoi(t, u[1:]); i%3 != k {
				t.Errorf("node %d: registered %s, want users i with i mod 3 = %d", k, u, k)
			}
		}
		for _, u := range f.pushed {
			if r := atoi(t, u[1:]) / usersPerRequest; r%3 != k {
				t.Errorf("node %d: got push request %d, want requests r with r mod 3 = %d", k, r, k)
			}
		}
	}
	if n := len(fakes[0].pushed) + len(fakes[1].pushed) + len(fakes[2].pushed); n != 5 || len(fakes[2].pushed) != 1 {
		t.Errorf("push requests: got %d (node 3: %d), want 5 (node 3: 1)", n, len(fakes[2].pushed))
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
