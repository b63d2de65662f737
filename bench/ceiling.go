package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/heraldpush/herald/fcm"
)

// ceilingClient says how the ceiling is measured, for the report.
const ceilingClient = "bare net/http HTTP/2 cleartext client (prior knowledge); " +
	"access token from the emulator's /token (JWT bearer grant) fetched once before timing; " +
	"each message is the one the server sent to user 0, re-addressed and marshalled per send"

// runCeiling sends one message per user straight to the emulator with
// streams concurrent requests, as fast as it answers.
func runCeiling(ctx context.Context, emu *emulatorServer, account, template []byte, users, streams int) (Ceiling, error) {
	c := Ceiling{Client: ceilingClient, Streams: streams}
	var msg fcm.Message
	if err := json.Unmarshal(template, &msg); err != nil {
		return c, fmt.Errorf("bench: ceiling: message template: %w", err)
	}
	token, err := accessToken(ctx, account)
	if err != nil {
		return c, err
	}
	emu.Reset() // count only the ceiling's messages, and free the server run's
	hc := &http.Client{Timeout: 30 * time.Second, Transport: h2cTransport()}
	defer hc.CloseIdleConnections()
	url := emu.url + "/v1/projects/" + benchProject + "/messages:send"
	start := time.Now()
	err = forEach(ctx, users, streams, func(ctx context.Context, i int) error {
		m := msg
		m.Token = tokenOf(i)
		return sendOne(ctx, hc, url, token, m)
	})
	elapsed := time.Since(start)
	c.Sent = emu.Stats().Accepted
	c.Seconds = elapsed.Seconds()
	c.PerSecond = float64(c.Sent) / c.Seconds
	if err == nil && c.Sent != users {
		err = fmt.Errorf("bench: ceiling: the emulator accepted %d of %d messages", c.Sent, users)
	}
	return c, err
}

// accessToken exchanges the service account's signed JWT at its token_uri.
func accessToken(ctx context.Context, account []byte) (string, error) {
	conf, err := google.JWTConfigFromJSON(account, fcm.MessagingScope)
	if err != nil {
		return "", fmt.Errorf("bench: ceiling: service account: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: 30 * time.Second})
	tok, err := conf.TokenSource(ctx).Token()
	if err != nil {
		return "", fmt.Errorf("bench: ceiling: access token: %w", err)
	}
	return tok.AccessToken, nil
}

// h2cTransport speaks only cleartext HTTP/2, as the server's FCM client does
// to an http:// endpoint.
func h2cTransport() *http.Transport {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 256,
		Protocols:           &protocols,
	}
}

// sendOne posts one messages:send request and requires a 200.
func sendOne(ctx context.Context, hc *http.Client, url, token string, m fcm.Message) error {
	body, err := json.Marshal(struct {
		Message fcm.Message `json:"message"`
	}{m})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("bench: ceiling: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bench: ceiling: send to %s: got %d: %s", m.Token, resp.StatusCode, answer)
	}
	return nil
}
