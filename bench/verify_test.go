package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
)

// sender sends messages to a real emulator as the server would.
type sender struct {
	t     *testing.T
	emu   *emulatorServer
	token string
}

func newSender(t *testing.T) sender {
	t.Helper()
	emu, err := startEmulator(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.stop() })
	account, err := emulator.NewServiceAccount(benchProject, emu.url+"/token", nil)
	if err != nil {
		t.Fatal(err)
	}
	token, err := accessToken(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	return sender{t: t, emu: emu, token: token}
}

// send sends user i a message with title and content.
func (s sender) send(i int, title, content string) {
	s.t.Helper()
	hc := &http.Client{Transport: h2cTransport()}
	m := fcm.Message{Token: tokenOf(i), Notification: &fcm.MessageNotification{Title: title, Body: content}}
	if err := sendOne(context.Background(), hc, s.emu.url+"/v1/projects/"+benchProject+"/messages:send", s.token, m); err != nil {
		s.t.Fatal(err)
	}
}

func TestCheckDeliveries(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		s := newSender(t)
		for i := range 3 {
			s.send(i, titleOf(i), contentOf(i))
		}
		s.send(1, titleOf(1), contentOf(1)) // a resend
		var d Delivery
		if err := checkDeliveries(s.emu.Emulator, ModeMessages, 3, &d); err != nil {
			t.Fatal(err)
		}
		if d.UsersReached != 3 || d.Duplicates != 1 {
			t.Errorf("got %d users reached, %d duplicates; want 3 and 1", d.UsersReached, d.Duplicates)
		}
	})
	t.Run("ErrMissing", func(t *testing.T) {
		t.Parallel()
		s := newSender(t)
		s.send(0, benchTitle, benchContent)
		s.send(2, benchTitle, benchContent)
		var d Delivery
		err := checkDeliveries(s.emu.Emulator, ModeUsers, 3, &d)
		if err == nil || !strings.Contains(err.Error(), "2 of 3 users") {
			t.Errorf("got %v, want an error naming 2 of 3 users", err)
		}
	})
	t.Run("ErrNotTheUsersOwn", func(t *testing.T) {
		t.Parallel()
		s := newSender(t)
		s.send(0, titleOf(0), contentOf(0))
		s.send(1, titleOf(0), contentOf(0)) // user 0's message to user 1
		var d Delivery
		err := checkDeliveries(s.emu.Emulator, ModeMessages, 2, &d)
		if err == nil || !strings.Contains(err.Error(), "user 1:") {
			t.Errorf("got %v, want an error naming user 1", err)
		}
	})
	t.Run("Template", func(t *testing.T) {
		t.Parallel()
		s := newSender(t)
		for i := range 3 {
			title, content := templateOf(i)
			s.send(i, title, content)
		}
		var d Delivery
		if err := checkDeliveries(s.emu.Emulator, ModeTemplate, 3, &d); err != nil {
			t.Fatalf("each device's own language: %v", err)
		}
		s = newSender(t)
		title, content := templateOf(0)
		s.send(0, strings.Replace(title, "u0", "u2", 1), content) // another user's name

		if title != "u0님 안녕하세요" {
			t.Fatalf("user 0's title %q: want the Korean template with the user ID", title)
		}
		if err := checkDeliveries(s.emu.Emulator, ModeTemplate, 1, &d); err == nil || !strings.Contains(err.Error(), "user 0:") {
			t.Errorf("got %v, want an error naming user 0", err)
		}
	})
}
