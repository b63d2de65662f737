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
	requests   []pushRequest
}

// pushRequest is one push request a fakeNode got.
type pushRequest struct {
	path   string
	users  []string
	title  string   // users and all
	titles []string // messages: each user's
}

func (n *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		UserID   string `json:"userId"`
		UserIDs  []string
		Messages []struct {
			UserID, Title, Content string
		}
		Title string
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
		n.requests = append(n.requests, pushRequest{path: r.URL.Path, users: body.UserIDs, title: body.Title})
		w.Write([]byte(`"Push has been requested to be sent."`))
	case "/api/push/v2/messages":
		req := pushRequest{path: r.URL.Path}
		for _, m := range body.Messages {
			req.users = append(req.users, m.UserID)
			req.titles = append(req.titles, m.Title)
		}
		n.requests = append(n.requests, req)
		w.Write([]byte(`"Push has been requested to be sent."`))
	case "/api/push/v2/all":
		n.requests = append(n.requests, pushRequest{path: r.URL.Path, title: body.Title})
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
	if _, _, err := pushAll(ctx, ModeUsers, clients, users, 2, nil); err != nil {
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

// TestPushModes checks each mode's requests: their endpoint, their size
// (the last one partial) and that every user is reached once, with its
// own title in messages mode.
func TestPushModes(t *testing.T) {
	t.Parallel()
	const users = 1100
	for _, tc := range []struct {
		mode     Mode
		requests int
		per      int
	}{
		{ModeUsers, 3, 500},
		{ModeMessages, 6, 200},
		{ModeAll, 1, users},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			fake := &fakeNode{}
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			acc, _, err := pushAll(context.Background(), tc.mode, []*client.Client{client.New(srv.URL, "k", "s", nil)}, users, 4, nil)
			if err != nil {
				t.Fatal(err)
			}
			if acc.Requests != tc.requests || acc.UsersPerRequest != tc.per || acc.Endpoint != tc.mode.Endpoint() {
				t.Errorf("accept: got %d requests of %d to %s, want %d of %d to %s",
					acc.Requests, acc.UsersPerRequest, acc.Endpoint, tc.requests, tc.per, tc.mode.Endpoint())
			}
			if len(fake.requests) != tc.requests {
				t.Fatalf("got %d requests, want %d", len(fake.requests), tc.requests)
			}
			seen := map[string]int{}
			for _, r := range fake.requests {
				if r.path != tc.mode.Endpoint() {
					t.Errorf("got a request to %s, want %s", r.path, tc.mode.Endpoint())
				}
				for k, u := range r.users {
					seen[u]++
					if tc.mode == ModeMessages && r.titles[k] != titleOf(atoi(t, u[1:])) {
						t.Errorf("user %s: got title %q, want %q", u, r.titles[k], titleOf(atoi(t, u[1:])))
					}
				}
			}
			if tc.mode == ModeAll {
				if fake.requests[0].title != benchTitle || len(fake.requests[0].users) != 0 {
					t.Errorf("all: got %+v, want the bench title and no user list", fake.requests[0])
				}
				return
			}
			for i := range users {
				if seen[userOf(i)] != 1 {
					t.Errorf("user %d: in %d requests, want 1", i, seen[userOf(i)])
				}
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"users", "messages", "all"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q): got %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "topic", "Users"} {
		if _, err := ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q): got no error", s)
		}
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
