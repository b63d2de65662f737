package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/client"
)

func TestAdminDefaults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte("ha_from_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name             string
		given            client.Admin
		env              map[string]string
		base, token, err string
	}{
		{"flags win", client.Admin{Base: "http://h:1", Token: "t"}, map[string]string{"HERALD_ADMIN_ADDR": "x:2", "HERALD_ADMIN_TOKEN": "u"}, "http://h:1", "t", ""},
		{"environment", client.Admin{}, map[string]string{"HERALD_ADMIN_ADDR": "10.0.0.1:9", "HERALD_ADMIN_TOKEN": "ha_env"}, "http://10.0.0.1:9", "ha_env", ""},
		{"token file of the data dir", client.Admin{}, map[string]string{"HERALD_DATA_DIR": dir}, "http://127.0.0.1:8081", "ha_from_file", ""},
		{"no token anywhere", client.Admin{}, map[string]string{"HERALD_DATA_DIR": filepath.Join(dir, "none")}, "", "", "no admin token: pass --token or set HERALD_ADMIN_TOKEN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.given
			err := a.Defaults(env(c.env))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Base != c.base || a.Token != c.token {
				t.Fatalf("got base %q token %q, want %q %q", a.Base, a.Token, c.base, c.token)
			}
		})
	}
}

func TestAdminDo(t *testing.T) {
	type seen struct{ method, path, auth, ctype, body string }
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	a := client.Admin{Base: srv.URL + "/", Token: "ha_tok"}
	ctx := context.Background()
	raw, err := a.Do(ctx, http.MethodPost, "/admin/v1/apps", map[string]any{"name": "x"})
	if err != nil || string(raw) != `{"ok":true}` {
		t.Fatalf("Do = %q, %v", raw, err)
	}
	if want := (seen{"POST", "/admin/v1/apps", "Bearer ha_tok", "application/json", `{"name":"x"}`}); got != want {
		t.Fatalf("request %+v, want %+v", got, want)
	}
	if _, err := a.Do(ctx, http.MethodPut, "/raw", []byte("as it is")); err != nil || got.body != "as it is" {
		t.Fatalf("[]byte body: sent %q, %v", got.body, err)
	}
	if _, err := a.Do(ctx, http.MethodGet, "/none", nil); err != nil || got.body != "" || got.method != "GET" {
		t.Fatalf("nil body: %+v, %v", got, err)
	}
}

func TestAdminError(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"the API's error shape with details", `{"statusCode":400,"code":"ERR-AB-VAL-00","message":"invalid request","details":[{"field":"tier","reason":"must be business"},{"field":"name","reason":"required"}]}`, 400,
			"admin API answered 400 ERR-AB-VAL-00: invalid request\n  tier: must be business\n  name: required"},
		{"not JSON", "  bad gateway\n", 502, "admin API answered 502 : bad gateway"},
		{"JSON without a code", `{"message":"m"}`, 500, `admin API answered 500 : {"message":"m"}`},
		{"a long body cut", long, 500, "admin API answered 500 : " + long[:200] + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			a := client.Admin{Base: srv.URL, Token: "t"}
			_, err := a.Do(context.Background(), http.MethodGet, "/x", nil)
			var e *client.AdminError
			if !errors.As(err, &e) || e.Status != c.status {
				t.Fatalf("err = %#v, want *AdminError with status %d", err, c.status)
			}
			if err.Error() != c.want {
				t.Fatalf("message\n%q\nwant\n%q", err.Error(), c.want)
			}
		})
	}
}
