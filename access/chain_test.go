package access

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestAccessRecordCanonical holds the canonical JSON to DESIGN 11: every
// member but hash, keys sorted, no spaces; and the hash to SHA-256 of
// prevHash, a newline and it.
func TestAccessRecordCanonical(t *testing.T) {
	op := "op_1"
	r := Record{At: time.Date(2026, 1, 2, 3, 4, 5, 6_789_000, time.FixedZone("KST", 9*3600)), Actor: &op,
		Email: "a@example.com", IP: "10.0.0.1", Method: "GET", Route: "GET /admin/v1/apps/{appId}/users/{userId}",
		AppID: "app_1", UserIDs: []string{"u<1>"}, UserCount: 1, Status: 200}
	r.Chain(7, GenesisHash, testAccessKey)
	want := `{"actor":"op_1","appId":"app_1","at":"2026-01-01T18:04:05.006Z","email":"a@example.com","ip":"10.0.0.1",` +
		`"method":"GET","prevHash":"` + GenesisHash + `","pushId":"","reason":"","route":"GET /admin/v1/apps/{appId}/users/{userId}",` +
		`"seq":7,"status":200,"userCount":1,"userIds":["u\u003c1\u003e"]}`
	if got := string(r.Canonical()); got != want {
		t.Errorf("canonical:\n got %s\nwant %s", got, want)
	}
	sum := sha256.Sum256([]byte(GenesisHash + "\n" + want))
	if r.Hash != hex.EncodeToString(sum[:]) || !r.Intact() {
		t.Errorf("hash: got %s, want %x", r.Hash, sum)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "hash")
	delete(m, "hmac")
	if asMap, _ := json.Marshal(m); string(asMap) != string(r.Canonical()) {
		t.Errorf("canonical differs from encoding/json's map of the members:\n got %s\nwant %s", r.Canonical(), asMap)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || back.Hash != r.Hash || !back.Intact() {
		t.Errorf("read back from %s: intact %t, %v", b, back.Intact(), err)
	}
	if !testAccessKey.Signs(back.Hash, back.HMAC) || Key("another key").Signs(back.Hash, back.HMAC) {
		t.Errorf("hmac %q: not the key's signature of the hash, or another key's too", back.HMAC)
	}
	back.Status = 204
	if back.Intact() {
		t.Error("a record changed after it was chained still holds")
	}
	var none Record
	none.Chain(1, GenesisHash, testAccessKey)
	if c := string(none.Canonical()); !json.Valid([]byte(c)) || !strings.Contains(c, `"actor":null`) || !strings.Contains(c, `"userIds":[]`) {
		t.Errorf("a record without actor or users: %s", c)
	}
}

var testAccessKey = Key("test access key")

// FuzzAccessRecordCanonical: the canonical JSON, written member by
// member, is what encoding/json writes of the record's members, whatever
// their strings hold (escapes, HTML characters, invalid UTF-8).
func FuzzAccessRecordCanonical(f *testing.F) {
	for _, s := range []string{"", "a@example.com", `q"b\s`, "<&>", "\x00\x1f\x7f", "사용자", "\xff\xfe", "\u2028\u2029", "\b\f\n\r\t"} {
		f.Add(s, "GET /admin/v1/apps/{appId}", int64(1_767_225_600_123), 200)
	}
	f.Fuzz(func(t *testing.T, s, route string, ms int64, status int) {
		actor := s + "!"
		r := Record{At: time.UnixMilli(ms % 253_402_300_799_000), Actor: &actor, Email: s, IP: s, Method: s, Route: route,
			AppID: s, PushID: route, Reason: s, UserIDs: []string{s, route}, UserCount: status * 2, Status: status, Seq: ms, Count: status % 1000}
		for _, rec := range []Record{r, {Email: s, At: r.At}} {
			want, err := json.Marshal(rec.wire())
			if err != nil {
				t.Skip(err) // a time encoding/json refuses
			}
			if got := rec.Canonical(); string(got) != string(want) {
				t.Errorf("canonical:\n got %s\nwant %s", got, want)
			}
		}
	})
}

// TestParseAccessHead: a head reads from its JSON or as seq:hash:hmac, and
// anything else is refused naming head.
func TestParseAccessHead(t *testing.T) {
	hash, mac := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, in := range []string{`{"seq":7,"hash":"` + hash + `","hmac":"` + mac + `","at":"2026-12-02T03:00:00Z"}`, "7:" + hash + ":" + mac} {
		h, err := ParseHead([]byte(in))
		if err != nil || h.Seq != 7 || h.Hash != hash || h.HMAC != mac {
			t.Errorf("ParseHead(%s): %+v, %v", in, h, err)
		}
	}
	for _, in := range []string{"", "{}", "x:" + hash + ":" + mac, "7:abc:" + mac, `{"seq":0}`, "not a head"} {
		if _, err := ParseHead([]byte(in)); !errors.Is(err, herald.ErrInvalidRequest) {
			t.Errorf("ParseHead(%q): got %v, want ErrInvalidRequest", in, err)
		}
	}
}
