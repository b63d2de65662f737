package sqlstore

import (
	"errors"
	"reflect"
	"testing"

	"github.com/heraldpush/herald"
)

func TestRecipientsRoundTrip(t *testing.T) {
	t.Parallel()
	for name, rs := range map[string][]herald.Recipient{
		"none":     {},
		"users":    {{UserID: "u1"}, {UserID: "사용자"}, {UserID: ""}},
		"messages": {{UserID: "u1", Content: &herald.Content{Title: "t", Content: "c", LinkURL: "https://l", ImageURL: "https://i"}}, {UserID: "u2", Content: &herald.Content{}}},
	} {
		got, err := decodeRecipients(encodeRecipients(rs))
		if err != nil || !reflect.DeepEqual(got, rs) {
			t.Errorf("%s: got (%+v, %v), want %+v", name, got, err, rs)
		}
	}
	good := encodeRecipients([]herald.Recipient{{UserID: "u1", Content: &herald.Content{Title: "t"}}})
	for name, b := range map[string][]byte{"empty": nil, "version": append([]byte{9}, good[1:]...), "truncated": good[:len(good)-3]} {
		if _, err := decodeRecipients(b); !errors.Is(err, errRecipients) {
			t.Errorf("%s: got %v, want errRecipients", name, err)
		}
	}
}
