package identity

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald/access"
)

var testAccessKey = access.Key("test access key")

// TestAccessRecordCount: an aggregated record's count is a canonical
// member, which a record standing for one request does not have.
func TestAccessRecordCount(t *testing.T) {
	r := AttemptRecord(TypedEmailKey("  Kim@Example.COM "), time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), 180)
	r.Chain(3, access.GenesisHash, testAccessKey)
	want := `{"actor":null,"appId":"","at":"2026-01-02T03:00:00Z","count":180,"email":"kim@example.com","ip":"",` +
		`"method":"POST","prevHash":"` + access.GenesisHash + `","pushId":"","reason":"","route":"POST /login",` +
		`"seq":3,"status":429,"userCount":0,"userIds":[]}`
	if got := string(r.Canonical()); got != want {
		t.Errorf("canonical:\n got %s\nwant %s", got, want)
	}
	b, _ := json.Marshal(r)
	var back access.Record
	if err := json.Unmarshal(b, &back); err != nil || back.Count != 180 || !back.Intact() {
		t.Errorf("read back from %s: count %d, intact %t, %v", b, back.Count, back.Intact(), err)
	}
}

// TestRecordedEmail: a typed email is kept to 320 bytes, cut between
// characters.
func TestRecordedEmail(t *testing.T) {
	long := strings.Repeat("가", 200) // 600 bytes
	got := access.RecordedEmail(long)
	if len(got) > access.MaxRecordedEmail || len(got) < access.MaxRecordedEmail-3 || !utf8.ValidString(got) {
		t.Errorf("access.RecordedEmail of 600 bytes: %d bytes, valid %t", len(got), utf8.ValidString(got))
	}
	if k := TypedEmailKey(strings.Repeat("A", 5000)); len(k) != len(emailPrefix)+access.MaxRecordedEmail || k != emailPrefix+strings.Repeat("a", access.MaxRecordedEmail) {
		t.Errorf("EmailKey of 5,000 bytes: %d bytes", len(k))
	}
	if TypedEmailKey("\u212Aate@example.com") == TypedEmailKey("kate@example.com") {
		t.Error("the Kelvin sign folds to k: emails must compare ASCII-lowercased only")
	}
}
