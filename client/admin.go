package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// adminTimeout bounds one admin API call.
const adminTimeout = 30 * time.Second

// Admin calls Herald's admin API (Authorization: Bearer <admin token>), as
// the `herald app` commands do.
type Admin struct {
	// Base is the admin listener's base URL, e.g. "http://127.0.0.1:8081".
	Base string
	// Token is the admin token.
	Token string
}

// Defaults fills what is not set the way the operator commands do: the
// base from HERALD_ADMIN_ADDR (else 127.0.0.1:8081), the token from
// HERALD_ADMIN_TOKEN, else from the admin-token file of HERALD_DATA_DIR
// (else ./herald-data).
func (a *Admin) Defaults(getenv func(string) string) error {
	if a.Base == "" {
		addr := getenv("HERALD_ADMIN_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8081"
		}
		a.Base = "http://" + addr
	}
	if a.Token == "" {
		a.Token = getenv("HERALD_ADMIN_TOKEN")
	}
	if a.Token == "" {
		dir := getenv("HERALD_DATA_DIR")
		if dir == "" {
			dir = "./herald-data"
		}
		b, err := os.ReadFile(filepath.Join(dir, "admin-token"))
		if err != nil {
			return errors.New("no admin token: pass --token or set HERALD_ADMIN_TOKEN")
		}
		a.Token = strings.TrimSpace(string(b))
	}
	return nil
}

// Do makes one admin API call and returns the answer's body. body is sent
// as it is when it is a []byte, else marshalled as JSON (nil: no body). An
// answer of 300 or more is returned as *AdminError.
func (a *Admin) Do(ctx context.Context, method, path string, body any) ([]byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	return a.send(ctx, method, path, "application/json", rd)
}

// Stream makes one admin API call whose body, of contentType, is read
// from body as it is sent (a file of any length), and returns the
// answer's body. Unlike Do it sets no overall timeout: the server bounds
// each part of a streamed body, and ctx the whole. An answer of 300 or
// more is returned as *AdminError.
func (a *Admin) Stream(ctx context.Context, method, path, contentType string, body io.Reader) ([]byte, error) {
	return a.send(ctx, method, path, contentType, body)
}

// send makes the call of Do and Stream.
func (a *Admin) send(ctx context.Context, method, path, contentType string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.Base, "/")+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.Token)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, adminAnswerError(resp.StatusCode, raw)
	}
	return raw, nil
}

// AdminError is an admin API refusal: its status, code, message and the
// details naming each problem.
type AdminError struct {
	Status  int
	Code    string
	Message string
	Details []struct{ Field, Reason string }
}

// Error names the status, code and message, and each detail on a line of
// its own.
func (e *AdminError) Error() string {
	msg := fmt.Sprintf("admin API answered %d %s: %s", e.Status, e.Code, e.Message)
	for _, d := range e.Details {
		msg += fmt.Sprintf("\n  %s: %s", d.Field, d.Reason)
	}
	return msg
}

// adminAnswerError turns an admin API error body into an error that names
// each problem in its details, so the operator sees why (for example that
// the app-user feature needs the business tier). A body that is not the
// API's error shape becomes the message, cut at 200 bytes.
func adminAnswerError(status int, raw []byte) error {
	e := &AdminError{Status: status}
	if json.Unmarshal(raw, e) != nil || e.Code == "" {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
	}
	return e
}
