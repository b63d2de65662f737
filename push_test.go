package herald

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRequestGroupIDProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"abcd", false},
		{"abcde", true},
		{"a1234", true},
		{strings.Repeat("a", 20), true},
		{strings.Repeat("a", 21), false},
		{"12345", false},
		{"!@#$%", false},
		{"ab-c_d.e~f", true},
		{"abc'd", false},
		{`abc"d`, false},
		{`abc\d`, false},
		{"abc`d", false},
		{"abc d", false},
		{"가나다라마", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := RequestGroupIDProblem(tt.in) == ""; got != tt.ok {
			t.Errorf("RequestGroupIDProblem(%q) ok: got %v, want %v", tt.in, got, tt.ok)
		}
	}
}

func TestParseScheduleTime(t *testing.T) {
	t.Parallel()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	ny, _ := time.LoadLocation("America/New_York")
	received := time.Date(2026, 12, 1, 22, 4, 30, 0, seoul)
	tests := []struct {
		name string
		in   string
		loc  *time.Location
		at   time.Time
		ok   bool
	}{
		{"SpecRefused", "2026-12-01T22:05", seoul, received, false},
		{"SpecAccepted", "2026-12-01T22:06", seoul, received, true},
		{"Exactly60s", "2026-12-01T22:06", seoul, time.Date(2026, 12, 1, 22, 5, 0, 0, seoul), true},
		{"Just under 60s", "2026-12-01T22:06", seoul, time.Date(2026, 12, 1, 22, 5, 0, 1, seoul), false},
		{"February30", "2027-02-30T10:00", seoul, received, false},
		{"Hour24", "2027-01-01T24:00", seoul, received, false},
		{"Seconds", "2027-01-01T10:00:00", seoul, received, false},
		{"Space", "2027-01-01 10:00", seoul, received, false},
		{"DSTGap", "2027-03-14T02:30", ny, received, false},
		{"DSTOverlap", "2027-11-07T01:30", ny, received, true},
		{"PastYear", "2025-01-01T10:00", seoul, received, false},
		{"BeyondHorizon", "2028-01-01T10:00", seoul, received, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, reason := ParseScheduleTime(tt.in, tt.loc, tt.at)
			if got := reason == ""; got != tt.ok {
				t.Errorf("ParseScheduleTime(%q) ok: got %v (%s), want %v", tt.in, got, reason, tt.ok)
			}
		})
	}
}

func TestPushChangeApply(t *testing.T) {
	t.Parallel()
	sendAt := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	scheduled := func() Push {
		at := sendAt
		return Push{Status: StatusScheduled, ScheduledAt: &at, Content: Content{Title: "t", Content: "c"}}
	}
	title, later := "(광고) sale", sendAt.Add(time.Hour)
	t.Run("AtDeadline", func(t *testing.T) {
		p := scheduled()
		moved, err := PushChange{Title: &title, ScheduledAt: &later}.Apply(&p, sendAt.Add(-EditDeadline))
		if err != nil || !moved {
			t.Fatalf("got moved=%v err=%v, want moved and no error", moved, err)
		}
		if !p.Marketing || p.Content.Title != title || !p.ScheduledAt.Equal(later) || len(p.Edits) != 1 {
			t.Fatalf("got %+v, want the new title (marketing), time and one edit", p)
		}
	})
	t.Run("PastDeadline", func(t *testing.T) {
		p := scheduled()
		_, err := PushChange{Title: &title}.Apply(&p, sendAt.Add(-EditDeadline+time.Nanosecond))
		if !errors.Is(err, ErrScheduleLocked) {
			t.Fatalf("got %v, want ErrScheduleLocked", err)
		}
	})
	t.Run("ErrOversized", func(t *testing.T) {
		p := scheduled()
		body := strings.Repeat("b", MaxFCMPayload)
		_, err := PushChange{Content: &body, ScheduledAt: &later}.Apply(&p, sendAt.Add(-time.Hour))
		e := AsError(err)
		if !errors.Is(err, ErrInvalidRequest) || len(e.Details) != 1 || e.Details[0].Field != "content" {
			t.Fatalf("got %v, want ErrInvalidRequest naming content", err)
		}
		if p.Content.Content != "c" || !p.ScheduledAt.Equal(sendAt) || len(p.Edits) != 0 {
			t.Fatalf("got %+v, want the push unchanged", p)
		}
	})
	t.Run("NotScheduled", func(t *testing.T) {
		p := scheduled()
		p.Status = StatusCancelled
		if err := p.CheckEditable(sendAt.Add(-time.Hour)); !errors.Is(err, ErrScheduleLocked) {
			t.Fatalf("got %v, want ErrScheduleLocked", err)
		}
	})
}

func TestUnreachableUsers(t *testing.T) {
	t.Parallel()
	d := func(user string, state DeliveryState, reason string) Delivery {
		return Delivery{UserID: user, State: state, Reason: reason}
	}
	got := UnreachableUsers([]string{"none", "dead", "mixed", "quiet", "failed", "none"}, []Delivery{
		d("dead", DeliveryUndeliverable, ReasonAppDeleted),
		d("dead", DeliveryUndeliverable, ReasonTokenExpired),
		d("mixed", DeliveryUndeliverable, ReasonAppDeleted),
		d("mixed", DeliverySent, ""),
		d("quiet", DeliverySuppressedNight, ""),
		d("failed", DeliveryFailed, ""),
	})
	want := []Unreachable{{"none", ReasonNoToken}, {"dead", ReasonAppDeleted}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestFCMPayloadSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		notification, data map[string]string
		want               int
	}{
		{"Empty", nil, nil, 45},
		{"OnePair", map[string]string{"title": "a"}, nil, 45 + 5 + 1},
		{"PairsAcrossMembers", map[string]string{"title": "a"}, map[string]string{"k": "v"}, 45 + 6 + 6 + 2},
		{"MultiByteInBytes", map[string]string{"title": "가"}, map[string]string{"키": "😀"}, 45 + 8 + 6 + 7},
	}
	for _, tt := range tests {
		if got := FCMPayloadSize(tt.notification, tt.data); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestContentFCMPayloadSize(t *testing.T) {
	t.Parallel()
	// Every message carries data.pushId (6 + 27 bytes) after the envelope
	// (45); each further pair costs 6 bytes and its key and value.
	const pushID = 6 + 27
	tests := []struct {
		name string
		in   Content
		want int
	}{
		{"TitleBody", Content{Title: "Hi", Content: "Yo"}, 45 + (5 + 2) + 6 + (4 + 2) + 6 + pushID},
		{"Link", Content{Title: "Hi", Content: "Yo", LinkURL: "https://e.x/a"}, 103 + 6 + 7 + 13},
		{"Image", Content{Title: "Hi", Content: "Yo", ImageURL: "https://i.x/p.png"}, 103 + 6 + 5 + 17},
		{"LinkAndImage", Content{Title: "Hi", Content: "Yo", LinkURL: "https://e.x/a", ImageURL: "https://i.x/p.png"}, 103 + 26 + 28},
		{"MultiByte", Content{Title: "가나", Content: "é"}, 45 + (5 + 6) + 6 + (4 + 2) + 6 + pushID},
	}
	for _, tt := range tests {
		if got := tt.in.FCMPayloadSize(); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestContentPayloadProblem(t *testing.T) {
	t.Parallel()
	// A title of n bytes with body "b" makes a payload of 100+n bytes.
	ascii := func(n int) Content { return Content{Title: strings.Repeat("a", n), Content: "b"} }
	tests := []struct {
		name      string
		in        Content
		wantField string // "" when it fits
		wantSize  int
	}{
		{"AtLimit", ascii(3996), "", 4096},
		{"OverLimit", ascii(3997), "title", 4097},
		// 1,332 characters of 3 bytes each: counted as 3,996 bytes.
		{"MultiByteAtLimit", Content{Title: strings.Repeat("가", 1332), Content: "b"}, "", 4096},
		{"MultiByteOverLimit", Content{Title: strings.Repeat("가", 1332) + "a", Content: "b"}, "title", 4097},
		{"BodyLongest", Content{Title: "t", Content: strings.Repeat("b", 5000)}, "content", 5000 + 100},
		// The image, 500 characters of 4 bytes, carries the most bytes.
		{"ImageLongest", Content{Title: strings.Repeat("t", 1000), Content: strings.Repeat("b", 600),
			LinkURL: strings.Repeat("é", 255), ImageURL: strings.Repeat("😀", 500)}, "imageURL",
			45 + (5 + 1000) + 6 + (4 + 600) + 6 + (7 + 510) + 6 + (5 + 2000) + 6 + (6 + 27)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.FCMPayloadSize(); got != tt.wantSize {
				t.Fatalf("size: got %d, want %d", got, tt.wantSize)
			}
			d, over := tt.in.PayloadProblem()
			if over != (tt.wantField != "") || d.Field != tt.wantField {
				t.Fatalf("got %+v over=%v, want field %q", d, over, tt.wantField)
			}
			if over {
				want := fmt.Sprintf("the FCM payload would be %d bytes, more than 4096", tt.wantSize)
				if d.Reason != want {
					t.Errorf("reason: got %q, want %q", d.Reason, want)
				}
			}
		})
	}
}

func TestPushIDLen(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Time{time.Unix(0, 0), time.Now(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
		if got := len(NewID("push_", at)); got != pushIDLen {
			t.Errorf("len(NewID(push_, %v)): got %d, want %d", at, got, pushIDLen)
		}
	}
}

// TestKindRule holds each push kind to its rule: who it goes to, whose
// devices must still be the user's, which are charged, which kinds count
// (and charge) the users their fan-out finds, which carry content per
// recipient, which are Herald's own notices, whose content is the app's
// templates and whose finish confirms consent; and a push to a token goes
// to the device.
func TestKindRule(t *testing.T) {
	t.Parallel()
	for kind, want := range map[PushKind]KindRule{
		KindUsers:           {Personal: true, Charged: true},
		KindMessages:        {Personal: true, Charged: true, PerRecipient: true},
		KindTopic:           {Targeted: true, Charged: true, CountsUsers: true},
		KindAll:             {Targeted: true, Charged: true, CountsUsers: true},
		KindToken:           {Targeted: true},
		KindConsentNotice:   {Personal: true, Informational: true},
		KindReconfirmation:  {Personal: true, PerRecipient: true, Informational: true, Templated: true, ConfirmsOnFinish: true},
		PushKind("unknown"): {Personal: true},
	} {
		if got := (Push{Kind: kind}).Rule(); got != want {
			t.Errorf("%s: got %+v, want %+v", kind, got, want)
		}
	}
	// A consent notice to a device no user is mapped to goes by its token.
	p := Push{Kind: KindConsentNotice, Token: "t"}
	if got, want := p.Rule(), (KindRule{Targeted: true, Informational: true}); got != want {
		t.Errorf("notice to a token: got %+v, want %+v", got, want)
	}
	if got := (Push{Kind: KindConsentNotice}).Rule(); got != kindRules[KindConsentNotice] {
		t.Errorf("notice to a user: got %+v, want the kind's rule", got)
	}
}

func TestNetServerActionsHalf(t *testing.T) {
	for _, tc := range []struct {
		status PushStatus
		half   int64
		want   int64
	}{
		{StatusScheduled, 3, 3},
		{StatusCancelled, 3, 0},
		{StatusSending, 2, 2},
		{StatusDone, 1, 1},
		{StatusFailed, 4, 4},
	} {
		p := Push{Status: tc.status, ServerActionsHalf: tc.half}
		if got := p.NetServerActionsHalf(); got != tc.want {
			t.Errorf("%s push charged %d: got %d, want %d", tc.status, tc.half, got, tc.want)
		}
	}
}
