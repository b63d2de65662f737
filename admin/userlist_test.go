package admin_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// usersPage is the answer of GET /admin/v1/apps/{appId}/users.
type usersPage struct {
	Users []struct {
		UserID         string    `json:"userId"`
		State          string    `json:"state"`
		Marketing      bool      `json:"marketing"`
		MarketingNight bool      `json:"marketingNight"`
		Devices        int       `json:"devices"`
		UpdatedAt      time.Time `json:"updatedAt"`
	} `json:"users"`
	NextCursor *string `json:"nextCursor"`
}

func TestAdminUsersList(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "t1", "kim-1")
	env.RegisterToken(t, app, "d2", "t2", "kim-1")
	env.RegisterToken(t, app, "d3", "t3", "kim-2")
	env.RegisterToken(t, app, "d4", "t4", "lee")
	env.RegisterToken(t, app, "d5", "t5", 42)
	env.SetMarketing(t, app, "kim-1", map[string]any{"marketing": true, "marketingNight": true})
	env.Withdraw(t, app, "kim-2")
	path := "/admin/v1/apps/" + app.ID + "/users"

	get := func(t *testing.T, query string) usersPage {
		t.Helper()
		res := env.AdminDo(t, http.MethodGet, path+query, nil)
		var p usersPage
		res.Decode(t, &p)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: got %d %s, want 200", query, res.Status, res.Body)
		}
		return p
	}
	ids := func(p usersPage) []string {
		out := []string{}
		for _, u := range p.Users {
			out = append(out, u.UserID)
		}
		return out
	}
	t.Run("All", func(t *testing.T) {
		p := get(t, "")
		if got := ids(p); !slices.Equal(got, []string{"42", "kim-1", "kim-2", "lee"}) || p.NextCursor != nil {
			t.Fatalf("got %v next %v, want every user by userId and no next page", got, p.NextCursor)
		}
		k1, k2 := p.Users[1], p.Users[2]
		if k1.State != "registered" || !k1.Marketing || !k1.MarketingNight || k1.Devices != 2 || k1.UpdatedAt.IsZero() {
			t.Errorf("kim-1: got %+v, want registered, both consents, 2 devices", k1)
		}
		if k2.State != "withdrawn" || k2.Marketing || k2.Devices != 0 {
			t.Errorf("kim-2: got %+v, want withdrawn with no devices", k2)
		}
	})
	t.Run("PagedPrefix", func(t *testing.T) {
		first := get(t, "?q=kim&limit=1")
		if got := ids(first); !slices.Equal(got, []string{"kim-1"}) || first.NextCursor == nil {
			t.Fatalf("first page: got %v next %v, want kim-1 and a cursor", got, first.NextCursor)
		}
		second := get(t, "?q=kim&limit=1&cursor="+*first.NextCursor)
		if got := ids(second); !slices.Equal(got, []string{"kim-2"}) || second.NextCursor != nil {
			t.Fatalf("second page: got %v next %v, want kim-2, the last", got, second.NextCursor)
		}
		if none := get(t, "?q=nobody"); len(none.Users) != 0 || none.NextCursor != nil {
			t.Errorf("no match: got %+v, want an empty page", none)
		}
	})
	t.Run("ErrQuery", func(t *testing.T) {
		for query, field := range map[string]string{"?limit=0": "limit", "?limit=201": "limit", "?limit=ten": "limit",
			"?cursor=***": "cursor", "?q=%FF": "q"} {
			got := testenv.WantError(t, env.AdminDo(t, http.MethodGet, path+query, nil), path, herald.ErrInvalidRequest)
			if len(got.Details) != 1 || got.Details[0].Field != field {
				t.Errorf("%s: got details %+v, want %s named", query, got.Details, field)
			}
		}
		if p := get(t, "?limit=200"); len(p.Users) != 4 {
			t.Errorf("limit=200: got %d users, want 4", len(p.Users))
		}
	})
	t.Run("ErrUnknownApp", func(t *testing.T) {
		testenv.WantError(t, env.AdminDo(t, http.MethodGet, "/admin/v1/apps/app_nope/users", nil), "/admin/v1/apps/app_nope/users", herald.ErrNotFound)
	})
}

// overviewAnswer is the answer of GET /admin/v1/apps/{appId}/overview.
type overviewAnswer struct {
	AppID          string    `json:"appId"`
	From           time.Time `json:"from"`
	To             time.Time `json:"to"`
	Pushes         int       `json:"pushes"`
	RequestedUsers int       `json:"requestedUsers"`
	Sent           int       `json:"sent"`
	Failed         int       `json:"failed"`
	Unreachable    int       `json:"unreachable"`
	ServerActions  float64   `json:"serverActions"`
}

func TestAdminOverview(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	path := "/admin/v1/apps/" + app.ID + "/overview"
	for query, days := range map[string]int{"": 7, "?days=1": 1, "?days=7": 7, "?days=30": 30} {
		res := env.AdminDo(t, http.MethodGet, path+query, nil)
		var o overviewAnswer
		res.Decode(t, &o)
		if res.Status != http.StatusOK || o.AppID != app.ID || o.To.Sub(o.From) != time.Duration(days)*24*time.Hour ||
			time.Since(o.To) > time.Minute || o.Pushes != 0 || o.ServerActions != 0 {
			t.Errorf("%q: got %d %s, want %d days ending now, nothing pushed", query, res.Status, res.Body, days)
		}
	}
	for _, query := range []string{"?days=0", "?days=2", "?days=31", "?days=-7", "?days=week", "?days=7.0"} {
		got := testenv.WantError(t, env.AdminDo(t, http.MethodGet, path+query, nil), path, herald.ErrInvalidRequest)
		if len(got.Details) != 1 || got.Details[0].Field != "days" {
			t.Errorf("%s: got details %+v, want days named", query, got.Details)
		}
	}
	testenv.WantError(t, env.AdminDo(t, http.MethodGet, "/admin/v1/apps/app_nope/overview", nil), "/admin/v1/apps/app_nope/overview", herald.ErrNotFound)
}
