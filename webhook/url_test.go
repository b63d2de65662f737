package webhook_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/heraldpush/herald/webhook"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", 2048-len("https://example.com/"))
	tests := []struct {
		url          string
		allowPrivate bool
		wantErr      string // substring; "" means valid
	}{
		{url: "https://example.com/hooks/herald"},
		{url: "https://example.com:8443/h?x=1"},
		{url: "https://93.184.216.34/h"},
		{url: "https://[2606:4700::1111]/h"},
		{url: long},
		{url: long + "a", wantErr: "at most 2048"},
		{url: "http://example.com/h", wantErr: "scheme must be https"},
		{url: "ftp://example.com/h", wantErr: "scheme must be https"},
		{url: "ftp://example.com/h", allowPrivate: true, wantErr: "scheme must be http or https"},
		{url: "/relative/path", wantErr: "absolute URL"},
		{url: "example.com/h", wantErr: "absolute URL"},
		{url: "https://exa mple.com/", wantErr: "absolute URL"},
		{url: "", wantErr: "absolute URL"},
		{url: "https:///path", wantErr: "host"},
		{url: "https:opaque", wantErr: "host"},
		{url: "https://user:pass@example.com/h", wantErr: "user information"},
		{url: "https://user@example.com/h", wantErr: "user information"},
		{url: "https://localhost/h", wantErr: "public"},
		{url: "https://LOCALHOST./h", wantErr: "public"},
		{url: "https://api.localhost/h", wantErr: "public"},
		{url: "https://127.0.0.1/h", wantErr: "public"},
		{url: "https://127.1.2.3:8443/h", wantErr: "public"},
		{url: "https://10.0.0.1/h", wantErr: "public"},
		{url: "https://172.16.5.4/h", wantErr: "public"},
		{url: "https://192.168.1.1/h", wantErr: "public"},
		{url: "https://169.254.169.254/latest/meta-data", wantErr: "public"},
		{url: "https://0.0.0.0/h", wantErr: "public"},
		{url: "https://224.0.0.1/h", wantErr: "public"},
		{url: "https://100.64.0.1/h", wantErr: "public"},
		{url: "https://100.127.255.254/h", wantErr: "public"},
		{url: "https://[::1]/h", wantErr: "public"},
		{url: "https://[::]/h", wantErr: "public"},
		{url: "https://[fe80::1%25eth0]/h", wantErr: "public"},
		{url: "https://[fd00::1]/h", wantErr: "public"},
		{url: "https://[ff02::1]/h", wantErr: "public"},
		{url: "https://[::ffff:127.0.0.1]/h", wantErr: "public"},
		{url: "https://[::ffff:10.0.0.1]/h", wantErr: "public"},
		{url: "https://[::ffff:169.254.169.254]/h", wantErr: "public"},
		{url: "https://[::ffff:100.64.0.1]/h", wantErr: "public"},
		{url: "http://127.0.0.1:8080/h", allowPrivate: true},
		{url: "http://localhost/h", allowPrivate: true},
		{url: "https://10.0.0.1/h", allowPrivate: true},
		{url: "http://user@127.0.0.1/h", allowPrivate: true, wantErr: "user information"},
	}
	for _, tt := range tests {
		err := webhook.ValidateURL(tt.url, tt.allowPrivate)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateURL(%.60q, %v): got %v, want nil", tt.url, tt.allowPrivate, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ValidateURL(%.60q, %v): got %v, want error containing %q", tt.url, tt.allowPrivate, err, tt.wantErr)
		}
	}
}

func TestIsPublicAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"93.184.216.34", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"2606:4700::1111", true},
		{"::ffff:8.8.8.8", true},
		{"127.0.0.1", false},
		{"10.1.2.3", false},
		{"172.31.255.255", false},
		{"192.168.0.1", false},
		{"169.254.1.1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"100.64.0.0", false},
		{"198.18.0.1", false},
		{"239.255.255.250", false},
		{"255.255.255.255", false},
		{"::1", false},
		{"::", false},
		{"fe80::1", false},
		{"fc00::1", false},
		{"ff05::2", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:192.168.1.1", false},
		{"::127.0.0.1", false},
		{"64:ff9b::a00:1", false},
	}
	for _, tt := range tests {
		if got := webhook.IsPublicAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsPublicAddr(%s): got %v, want %v", tt.addr, got, tt.want)
		}
	}
}
