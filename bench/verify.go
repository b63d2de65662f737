package bench

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/heraldpush/herald/fcm/emulator"
)

// checkDeliveries counts into d the users the emulator has a message for
// and the messages beyond one per user, and checks that each user's first
// message is the one the mode sent it: the run's message, in messages
// mode the user's own title and content, in template mode the templates
// rendered for the user in the device's language. It runs after the timing.
func checkDeliveries(emu *emulator.Emulator, mode Mode, users int, d *Delivery) error {
	var wrong []error
	for i := range users {
		msgs := emu.Messages(tokenOf(i))
		if len(msgs) == 0 {
			continue
		}
		d.UsersReached++
		d.Duplicates += len(msgs) - 1
		if len(wrong) < 3 {
			if err := checkMessage(msgs[0].Message, mode, i); err != nil {
				wrong = append(wrong, err)
			}
		}
	}
	if err := errors.Join(wrong...); err != nil {
		return fmt.Errorf("bench: wrong message at the emulator: %w", err)
	}
	if d.UsersReached != users {
		return fmt.Errorf("bench: the emulator has messages for %d of %d users", d.UsersReached, users)
	}
	return nil
}

// checkMessage checks the FCM message user i got.
func checkMessage(raw []byte, mode Mode, i int) error {
	var m struct {
		Token        string `json:"token"`
		Notification struct {
			Title string `json:"title"`
			Body  string `json:"body"`
		} `json:"notification"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("user %d: %w", i, err)
	}
	title, content := benchTitle, benchContent
	switch mode {
	case ModeMessages:
		title, content = titleOf(i), contentOf(i)
	case ModeTemplate:
		title, content = templateOf(i)
	}
	if m.Token != tokenOf(i) || m.Notification.Title != title || m.Notification.Body != content {
		return fmt.Errorf("user %d: got token %q, %q / %q, want %q, %q / %q",
			i, m.Token, m.Notification.Title, m.Notification.Body, tokenOf(i), title, content)
	}
	return nil
}

// checkBaseline checks that, after the baseline push, every user has the
// mode's message and then the baseline's plain one, and no other.
func checkBaseline(emu *emulator.Emulator, users int) error {
	for i := range users {
		msgs := emu.Messages(tokenOf(i))
		if len(msgs) != 2 {
			return fmt.Errorf("bench: baseline: user %d has %d messages, want 2", i, len(msgs))
		}
		if err := checkMessage(msgs[1].Message, ModeAll, i); err != nil {
			return fmt.Errorf("bench: baseline: %w", err)
		}
	}
	return nil
}
