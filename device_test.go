package herald

import (
	"testing"
	"time"
)

func TestVersionBelow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    string
		min  [3]int
		want bool
	}{
		{"1.4.9", BadgeSince, true},
		{"1.5.0", BadgeSince, false},
		{"1.5.0-beta.1", BadgeSince, false},
		{"1.10.0", ImageSince, false},
		{"1.5.9", ImageSince, true},
		{"2.0.0", ImageSince, false},
		{"0.9.9+build", ImageSince, true},
		{"garbage", ImageSince, true},
	}
	for _, tt := range tests {
		if got := VersionBelow(tt.v, tt.min); got != tt.want {
			t.Errorf("VersionBelow(%q, %v): got %v, want %v", tt.v, tt.min, got, tt.want)
		}
	}
}

func TestDeviceMapTo(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := App{ID: "a", DefaultConsent: Consent{Marketing: true}}
	set := User{ID: "alice", Consent: Consent{Marketing: true, MarketingNight: true}, ConsentSet: true}
	unset := User{ID: "bob", Consent: Consent{}, ConsentSet: false}
	tests := []struct {
		name string
		dev  func() Device
		user User
		want Consent
	}{
		{"NewDeviceDefault", func() Device { return NewDevice(app, "d", now) }, unset, Consent{Marketing: true}},
		{"AdoptsServerAPIPair", func() Device { return NewDevice(app, "d", now) }, set, Consent{true, true}},
		{"SameUserKeepsOwnPair", func() Device {
			d := NewDevice(app, "d", now)
			d.UserID, d.Consent = &set.ID, Consent{}
			return d
		}, set, Consent{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.dev()
			d.MapTo(tt.user)
			if d.Consent != tt.want || d.UserID == nil || *d.UserID != tt.user.ID {
				t.Errorf("got %+v mapped to %v, want %+v mapped to %s", d.Consent, d.UserID, tt.want, tt.user.ID)
			}
		})
	}
}
