package access

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// Record is one access to the admin listener (DESIGN 11): an
// authenticated admin API request, a dashboard page or action, or a
// sign-in attempt. Records are append-only and hash-chained: each holds
// the hash of the one before (PrevHash) and its own (Hash), so that a
// record changed, removed or inserted afterwards breaks the chain.
type Record struct {
	// Seq numbers the records from 1, without gaps.
	Seq int64
	// At is when the request was answered, kept to the millisecond.
	At time.Time
	// Actor is the operator's ID, herald.OwnerID, or nil for a sign-in that
	// failed.
	Actor *string
	// Email is the operator's, or the email typed at a sign-in; "" for
	// the owner.
	Email string
	// IP is the client's address.
	IP     string
	Method string
	// Route is the pattern the request matched ("GET
	// /admin/v1/apps/{appId}/users/{userId}"), a dashboard page's by its
	// pattern too.
	Route string
	// AppID and PushID are what the request was about; "" when none.
	AppID string
	// UserIDs are the users whose data the answer showed or the request
	// changed, at most MaxUserIDs of them; UserCount counts all.
	UserIDs   []string
	UserCount int
	PushID    string
	// Status is the HTTP status the request was answered with.
	Status int
	// Reason is the reason given for a download of personal data; "" for
	// any other request.
	Reason string
	// Count is how many attempts an aggregated record stands for: the
	// sign-ins refused by the throttle, or the bearer tokens refused, of
	// one key (an address or a typed email) in one window of
	// identity.AttemptWindow starting at At. 0 on every other record, which stands
	// for one request; it is then absent from the record's JSON.
	Count    int
	PrevHash string
	Hash     string
	// HMAC is hex HMAC-SHA256 of Hash under the Key: a record
	// written or changed by someone without the master key does not
	// verify. "" on the records written before records were signed.
	HMAC string
	// Intent is the ID of the intent this record completes (see
	// Store.RecordIntent): appending the record deletes it. Not a
	// member of the record.
	Intent string
}

// StatusUnknown is the status of the record of an intent that no answer's
// record completed (Store.RecordPending): a change that may or may
// not have been made.
const StatusUnknown = 0

// IntentAbandoned is how old an intent is when RecordPending appends it as
// a record of unknown outcome: well past any request's deadline, so the
// record of its answer would have been written by then.
const IntentAbandoned = time.Minute

// MaxRecordedEmail is how many bytes of a typed email a record keeps.
const MaxRecordedEmail = 320

// MaxUserIDs is how many userIds an access record lists; userCount
// counts all.
const MaxUserIDs = 200

// GenesisHash is the PrevHash of the first record of a chain.
var GenesisHash = strings.Repeat("0", 64)

// wireRecord is a record's JSON: its members in sorted order, so that
// encoding/json writes them as it writes a map (the canonical form) but
// without a map's cost; Hash is left out of the canonical form.
type wireRecord struct {
	Actor     *string   `json:"actor"`
	AppID     string    `json:"appId"`
	At        time.Time `json:"at"`
	Count     int       `json:"count,omitempty"`
	Email     string    `json:"email"`
	Hash      *string   `json:"hash,omitempty"`
	HMAC      *string   `json:"hmac,omitempty"`
	IP        string    `json:"ip"`
	Method    string    `json:"method"`
	PrevHash  string    `json:"prevHash"`
	PushID    string    `json:"pushId"`
	Reason    string    `json:"reason"`
	Route     string    `json:"route"`
	Seq       int64     `json:"seq"`
	Status    int       `json:"status"`
	UserCount int       `json:"userCount"`
	UserIDs   []string  `json:"userIds"`
}

// wire is the record's JSON members, hash left out.
func (r Record) wire() wireRecord {
	ids := r.UserIDs
	if ids == nil {
		ids = []string{}
	}
	return wireRecord{Actor: r.Actor, AppID: r.AppID, At: r.At.UTC().Truncate(time.Millisecond), Count: r.Count, Email: r.Email,
		IP: r.IP, Method: r.Method, PrevHash: r.PrevHash, PushID: r.PushID, Reason: r.Reason, Route: r.Route,
		Seq: r.Seq, Status: r.Status, UserCount: r.UserCount, UserIDs: ids}
}

// Canonical is the JSON the record's hash covers: every member but hash
// and hmac, keys sorted, no spaces, as encoding/json writes a map; count
// only on an aggregated record, so the records written before it existed
// keep their hashes.
// It is written member by member, without reflection: a record's chain
// hash is computed on every admin request.
func (r Record) Canonical() []byte {
	w := r.wire()
	b := make([]byte, 0, 320+len(w.Email)+len(w.Route)+len(w.Reason)+16*len(w.UserIDs))
	b = append(b, `{"actor":`...)
	if w.Actor == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *w.Actor)
	}
	b = appendJSONString(append(b, `,"appId":`...), w.AppID)
	at, err := w.At.MarshalJSON()
	if err != nil {
		panic(err) // a year past 9999: no request is recorded then
	}
	b = append(append(b, `,"at":`...), at...)
	if w.Count != 0 {
		b = strconv.AppendInt(append(b, `,"count":`...), int64(w.Count), 10)
	}
	b = appendJSONString(append(b, `,"email":`...), w.Email)
	b = appendJSONString(append(b, `,"ip":`...), w.IP)
	b = appendJSONString(append(b, `,"method":`...), w.Method)
	b = appendJSONString(append(b, `,"prevHash":`...), w.PrevHash)
	b = appendJSONString(append(b, `,"pushId":`...), w.PushID)
	b = appendJSONString(append(b, `,"reason":`...), w.Reason)
	b = appendJSONString(append(b, `,"route":`...), w.Route)
	b = strconv.AppendInt(append(b, `,"seq":`...), w.Seq, 10)
	b = strconv.AppendInt(append(b, `,"status":`...), int64(w.Status), 10)
	b = strconv.AppendInt(append(b, `,"userCount":`...), int64(w.UserCount), 10)
	b = append(b, `,"userIds":[`...)
	for i, id := range w.UserIDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	return append(b, "]}"...)
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// that needs no escape as it is, anything else by encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// ChainHash is the hash of the record whose canonical JSON is canonical
// and whose predecessor's hash is prev: hex SHA-256 of prev + "\n" +
// canonical.
func ChainHash(prev string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// Chain links r after the record whose hash is prev, as record seq, signed
// with key: it sets Seq, PrevHash, Hash and HMAC, and keeps At to the
// millisecond.
func (r *Record) Chain(seq int64, prev string, key Key) {
	r.Seq, r.PrevHash = seq, prev
	r.At = r.At.UTC().Truncate(time.Millisecond)
	if r.UserIDs == nil {
		r.UserIDs = []string{}
	}
	r.Hash = ChainHash(prev, r.Canonical())
	r.HMAC = key.Sign(r.Hash)
}

// Intact reports whether r's hash is the hash of its members.
func (r Record) Intact() bool {
	return r.Hash == ChainHash(r.PrevHash, r.Canonical())
}

// MarshalJSON writes the record as the admin API shows it: the canonical
// members, hash and hmac.
func (r Record) MarshalJSON() ([]byte, error) {
	w := r.wire()
	w.Hash, w.HMAC = &r.Hash, &r.HMAC
	return json.Marshal(w)
}

// UnmarshalJSON reads a record as MarshalJSON writes it.
func (r *Record) UnmarshalJSON(b []byte) error {
	var v struct {
		Seq       int64     `json:"seq"`
		At        time.Time `json:"at"`
		Actor     *string   `json:"actor"`
		Email     string    `json:"email"`
		IP        string    `json:"ip"`
		Method    string    `json:"method"`
		Route     string    `json:"route"`
		AppID     string    `json:"appId"`
		UserIDs   []string  `json:"userIds"`
		UserCount int       `json:"userCount"`
		PushID    string    `json:"pushId"`
		Status    int       `json:"status"`
		Reason    string    `json:"reason"`
		Count     int       `json:"count"`
		PrevHash  string    `json:"prevHash"`
		Hash      string    `json:"hash"`
		HMAC      string    `json:"hmac"`
		Intent    string    `json:"-"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Record(v)
	return nil
}

// Filter selects access records, in seq order.
type Filter struct {
	// From (inclusive) and To (exclusive) bound At; zero is unbounded.
	From, To time.Time
	// Actor, AppID and UserID, when set, keep the records of that actor
	// (an operator's ID or herald.OwnerID), about that app, or listing that user.
	Actor, AppID, UserID string
	// Limit is the page's size (AccessRecords; at most MaxLimit).
	Limit int
	// Cursor continues after the last record of the previous page.
	Cursor string
}

// Access records listed at once: by default and at most.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Verdict is what walking the chain found: OK when every record's
// hash holds and links to the one before, from the chain's anchor to its
// head, every signed record's hmac holds and no unsigned record follows a
// signed one, and (when a head was given) the chain still holds that
// head; Records counts those walked, Unsigned those from before records
// were signed; FirstBroken is the seq of the first record that does not
// hold (or, when records are missing at the chain's end, the seq of the
// first missing), nil when OK.
type Verdict struct {
	OK          bool   `json:"ok"`
	Records     int64  `json:"records"`
	Unsigned    int64  `json:"unsigned"`
	FirstBroken *int64 `json:"firstBroken"`
}

// Key signs the access records' chain: each record's HMAC is
// HMAC-SHA256 of its hash under it. herald.MasterKey.AccessKey derives it.
type Key []byte

// Sign returns hex HMAC-SHA256 of hash under k.
func (k Key) Sign(hash string) string {
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(hash))
	return hex.EncodeToString(mac.Sum(nil))
}

// Signs reports whether sig is k's signature of hash, in constant time.
func (k Key) Signs(hash, sig string) bool {
	return hmac.Equal([]byte(k.Sign(hash)), []byte(sig))
}

// Head is the chain's last record as an operator keeps it outside
// the database (herald audit head): a later verify given it proves that
// no record up to it was cut or changed since. HMAC is the record's, so
// only the master key's holder can make a head.
type Head struct {
	Seq  int64     `json:"seq"`
	Hash string    `json:"hash"`
	HMAC string    `json:"hmac"`
	At   time.Time `json:"at"`
}

// ParseHead reads a head as herald audit head prints it (its JSON),
// or as seq:hash:hmac; herald.ErrInvalidRequest naming what is wrong.
func ParseHead(b []byte) (Head, error) {
	var h Head
	if parts := strings.Split(strings.TrimSpace(string(b)), ":"); len(parts) == 3 {
		seq, err := strconv.ParseInt(parts[0], 10, 64)
		h = Head{Seq: seq, Hash: parts[1], HMAC: parts[2]}
		if err != nil {
			h.Seq = 0
		}
	} else if err := json.Unmarshal(b, &h); err != nil {
		return h, herald.Invalid(herald.Detail{Field: "head", Reason: "must be the JSON herald audit head prints, or seq:hash:hmac"})
	}
	if h.Seq < 1 || len(h.Hash) != 64 || len(h.HMAC) != 64 {
		return h, herald.Invalid(herald.Detail{Field: "head", Reason: "must have a seq of at least 1, and a hash and an hmac of 64 hex digits"})
	}
	return h, nil
}

// Store keeps the access records' chain. Nothing changes a record
// once appended; only PruneAccessRecords removes the oldest.
type Store interface {
	// AppendAccessRecords appends recs to the chain in one transaction,
	// in order, each linked to the chain's head at that moment and signed
	// with key (see Record.Chain): their Seq, PrevHash, Hash and
	// HMAC are set then and returned. The transaction may share its commit with other requests'
	// (group commit); it returns once its records are durable. On several
	// nodes the head is locked per append, so they keep one chain.
	AppendAccessRecords(ctx context.Context, key Key, recs []Record) ([]Record, error)
	// AccessRecords returns a page of the records f selects and the cursor
	// of the next ("" at the end). herald.ErrInvalidRequest for a malformed
	// cursor or a limit outside 1..MaxLimit.
	AccessRecords(ctx context.Context, f Filter) ([]Record, string, error)
	// EachAccessRecord calls fn with every record f selects (its Limit
	// ignored), in seq order, reading as it goes; fn's error stops it and
	// is returned.
	EachAccessRecord(ctx context.Context, f Filter, fn func(Record) error) error
	// VerifyAccessRecords walks the whole chain, checking each record's
	// hmac under key; with head, also that the chain still holds it (the
	// record of head.Seq has head.Hash). herald.ErrInvalidRequest when head's
	// hmac is not key's, or when head.Seq was pruned.
	VerifyAccessRecords(ctx context.Context, key Key, head *Head) (Verdict, error)
	// AccessHead returns the chain's last record as a head; herald.ErrNotFound
	// when the chain has no record.
	AccessHead(ctx context.Context) (Head, error)
	// RecordIntent keeps, durably, that the request rec records is about
	// to change something, before it does (DESIGN 11): no change exists
	// without its record. The record of its answer (with Intent id)
	// deletes it as it is appended; an intent left behind becomes a
	// record of its own (RecordPending).
	RecordIntent(ctx context.Context, id string, rec Record) error
	// RecordPending appends, signed with key, what waits for a record:
	// the aggregated records of the attempt windows ended by now
	// (identity.AttemptStore), one per key and window with the count of its
	// refused attempts, and the intents IntentAbandoned old, each as a
	// record with StatusUnknown; it forgets them in the transaction that
	// appends them, so each is recorded once on any number of nodes, and
	// returns how many records it appended.
	RecordPending(ctx context.Context, key Key, now time.Time) (int, error)
	// PruneAccessRecords removes, from the chain's start, at most limit
	// records answered before before, and returns how many it removed.
	// The first record kept has its PrevHash kept as the chain's anchor,
	// so the rest still verifies.
	PruneAccessRecords(ctx context.Context, before time.Time, limit int) (int, error)
}

// RecordedEmail is email as a record keeps it: at most MaxRecordedEmail
// bytes, cut at a character's boundary.
func RecordedEmail(email string) string {
	if len(email) <= MaxRecordedEmail {
		return email
	}
	cut := MaxRecordedEmail
	for cut > 0 && !utf8.RuneStart(email[cut]) {
		cut--
	}
	return email[:cut]
}
