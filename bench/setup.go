package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
)

// emulatorServer is an FCM emulator served on a loopback port.
type emulatorServer struct {
	*emulator.Emulator
	url string
	srv *http.Server
}

// startEmulator serves a fresh emulator on 127.0.0.1, port chosen by the
// system, that calls seen with the token of each valid send.
func startEmulator(latency time.Duration, seen func(token string)) (*emulatorServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: emulator: %w", err)
	}
	emu := emulator.New(emulator.Options{Latency: latency, BeforeAnswer: seen})
	srv := emu.Server(ln.Addr().String())
	go srv.Serve(ln)
	return &emulatorServer{Emulator: emu, url: "http://" + ln.Addr().String(), srv: srv}, nil
}

func (e *emulatorServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// benchApp is the app the run pushes through.
type benchApp struct {
	id      string
	clients []*client.Client // one per node
	account []byte           // its service-account file
	// sendRate is its send rate per minute as the server answered it.
	sendRate int
}

// benchProject is the FCM project of the bench app's service account.
const benchProject = "herald-bench"

// setUp creates a business-tier app with sendRate (per minute) and the
// settings given through the admin API and gives it a service account
// whose token endpoint is the emulator's.
func setUp(ctx context.Context, srv Server, emuURL string, sendRate int, settings map[string]any) (benchApp, error) {
	admin := adminClient{base: srv.AdminURL, token: srv.AdminToken, hc: &http.Client{Timeout: 30 * time.Second}}
	var created struct {
		AppID     string `json:"appId"`
		APIKey    string `json:"apiKey"`
		SecretKey string `json:"secretKey"`
		SendRate  int    `json:"sendRatePerMinute"`
	}
	all := map[string]any{"name": "bench", "tier": "business", "sendRatePerMinute": sendRate}
	for k, v := range settings {
		all[k] = v
	}
	body, _ := json.Marshal(all)
	if err := admin.do(ctx, http.MethodPost, "/admin/v1/apps", body, http.StatusCreated, &created); err != nil {
		return benchApp{}, err
	}
	account, err := emulator.NewServiceAccount(benchProject, emuURL+"/token", nil)
	if err != nil {
		return benchApp{}, fmt.Errorf("bench: service account: %w", err)
	}
	if err := admin.do(ctx, http.MethodPut, "/admin/v1/apps/"+created.AppID+"/fcm-credentials", account, http.StatusOK, nil); err != nil {
		return benchApp{}, err
	}
	app := benchApp{id: created.AppID, account: account, sendRate: created.SendRate}
	for _, u := range srv.nodes() {
		app.clients = append(app.clients, client.New(u, created.APIKey, created.SecretKey, nil))
	}
	return app, nil
}

// appSettings are the bench app's settings besides its name, tier and
// rate: for marketing pushes (Options.Marketing) its users' consent, the
// (광고) check off, and the cap.
func (o Options) appSettings() map[string]any {
	if !o.Marketing {
		return nil
	}
	s := map[string]any{"adPrefixCheck": false, "defaultConsent": map[string]any{"marketing": true, "marketingNight": true}}
	if o.MarketingCap > 0 {
		s["marketingCap"] = map[string]any{"perDay": o.MarketingCap}
	}
	return s
}

// pushOptions are the options of the bench's pushes: nil, or
// isMarketing (Options.Marketing).
func (o Options) pushOptions() *client.Options {
	if !o.Marketing {
		return nil
	}
	yes := true
	return &client.Options{IsMarketing: &yes}
}

// adminClient calls the admin API with the bearer token.
type adminClient struct {
	base, token string
	hc          *http.Client
}

// do sends the JSON body to method path, expects status want and decodes
// the answer into out unless out is nil.
func (c adminClient) do(ctx context.Context, method, path string, body []byte, want int, out any) error {
	return c.send(ctx, method, path, "application/json", bytes.NewReader(body), want, out)
}

// send is do with a body of any content type, read as it is sent.
func (c adminClient) send(ctx context.Context, method, path, contentType string, body io.Reader, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("bench: admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("bench: admin %s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("bench: admin %s %s: got %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("bench: admin %s %s: decode answer: %w", method, path, err)
	}
	return nil
}
