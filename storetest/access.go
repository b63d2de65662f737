package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

var accessTests = []test{
	{"AppendChains", testAccessAppendChains},
	{"AppendManyAtOnce", testAccessAppendMany},
	{"RoundTrip", testAccessRoundTrip},
	{"Filters", testAccessFilters},
	{"Pages", testAccessPages},
	{"Each", testAccessEach},
	{"VerifyFindsTampering", testAccessTampered},
	{"VerifyFindsMissingEnd", testAccessMissingEnd},
	{"PruneKeepsAnchor", testAccessPrune},
	{"ConcurrentAppendsOneChain", testAccessConcurrent},
	{"AppendPastDeadline", testAccessPastDeadline},
	{"VerifyFindsForgedRecord", testAccessForged},
	{"HeadFindsCutTail", testAccessHeadCutTail},
	{"HeadRefusedUnsigned", testAccessHeadForged},
	{"AttemptsRecordedOncePerWindow", testAttemptsRecorded},
}

// accessRec is a record of the owner's GET of route at at.
func accessRec(route string, at time.Time) access.Record {
	owner := herald.OwnerID
	return access.Record{At: at, Actor: &owner, IP: "127.0.0.1", Method: "GET", Route: route, Status: 200}
}

func (b *bundle) appendAccess(recs ...access.Record) []access.Record {
	b.t.Helper()
	out, err := b.s.AppendAccessRecords(b.ctx, accessKey, recs)
	must(b.t, "AppendAccessRecords", err)
	return out
}

func (b *bundle) accessPage(f access.Filter) ([]access.Record, string) {
	b.t.Helper()
	if f.Limit == 0 {
		f.Limit = access.DefaultLimit
	}
	recs, next, err := b.s.AccessRecords(b.ctx, f)
	must(b.t, "AccessRecords", err)
	return recs, next
}

func seqs(recs []access.Record) []int64 {
	out := []int64{}
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

// accessKey signs the suite's records.
var accessKey = access.Key("storetest access key")

func (b *bundle) wantVerdict(ok bool, records int64, firstBroken int64) {
	b.t.Helper()
	b.wantVerdictWith(nil, ok, records, firstBroken)
}

// wantVerdictWith is wantVerdict of a verify given head.
func (b *bundle) wantVerdictWith(head *access.Head, ok bool, records int64, firstBroken int64) {
	b.t.Helper()
	v, err := b.s.VerifyAccessRecords(b.ctx, accessKey, head)
	must(b.t, "VerifyAccessRecords", err)
	got := "nil"
	if v.FirstBroken != nil {
		got = fmt.Sprint(*v.FirstBroken)
	}
	want := "nil"
	if !ok {
		want = fmt.Sprint(firstBroken)
	}
	if v.OK != ok || v.Records != records || got != want {
		b.t.Errorf("verify: got ok %t, records %d, firstBroken %s; want %t, %d, %s", v.OK, v.Records, got, ok, records, want)
	}
}

func testAccessAppendChains(t *testing.T, b *bundle) {
	b.wantVerdict(true, 0, 0)
	first := b.appendAccess(accessRec("GET /a", b.now), accessRec("GET /b", b.now))
	more := b.appendAccess(accessRec("GET /c", b.now.Add(time.Second)))
	all := append(first, more...)
	prev := access.GenesisHash
	for i, r := range all {
		if r.Seq != int64(i+1) || r.PrevHash != prev || !r.Intact() || len(r.Hash) != 64 {
			t.Errorf("record %d: seq %d, prevHash %.8s (want %.8s), intact %t", i, r.Seq, r.PrevHash, prev, r.Intact())
		}
		prev = r.Hash
	}
	got, _ := b.accessPage(access.Filter{})
	if !slices.EqualFunc(got, all, func(a, b access.Record) bool { return a.Hash == b.Hash }) {
		t.Errorf("listed %v, want the appended %v", seqs(got), seqs(all))
	}
	b.wantVerdict(true, 3, 0)
}

// testAccessAppendMany appends, in one call, more records and more of
// their users than one insert writes (the store may split them), a
// user listed twice in a record among them: each is kept once and in
// order, the chain holds, and the user filter finds each record that
// lists the user.
func testAccessAppendMany(t *testing.T, b *bundle) {
	const n = 301
	recs := make([]access.Record, n)
	for i := range recs {
		recs[i] = accessRec(fmt.Sprintf("GET /r%d", i), b.now)
		recs[i].UserIDs = []string{fmt.Sprintf("u%d", i%7), "all", fmt.Sprintf("u%d", i%7)}
		recs[i].UserCount = 3
	}
	out := b.appendAccess(recs...)
	if len(out) != n || out[n-1].Seq != n {
		t.Fatalf("appended %d records, last seq %d; want %d, %d", len(out), out[len(out)-1].Seq, n, n)
	}
	var got []access.Record
	must(t, "EachAccessRecord", b.s.EachAccessRecord(b.ctx, access.Filter{}, func(r access.Record) error {
		got = append(got, r)
		return nil
	}))
	if !slices.EqualFunc(got, out, func(a, b access.Record) bool { return a.Hash == b.Hash && a.Route == b.Route }) {
		t.Errorf("read back %d records, want the %d appended in order", len(got), n)
	}
	for user, want := range map[string]int{"all": n, "u3": 43} {
		var listed int
		must(t, "EachAccessRecord", b.s.EachAccessRecord(b.ctx, access.Filter{UserID: user}, func(access.Record) error {
			listed++
			return nil
		}))
		if listed != want {
			t.Errorf("records listing %s: got %d, want %d", user, listed, want)
		}
	}
	b.wantVerdict(true, n, 0)
}

func testAccessRoundTrip(t *testing.T, b *bundle) {
	r := accessRec("GET /admin/v1/apps/{appId}/users/{userId}", b.now.Add(1234567*time.Microsecond))
	r.Email, r.AppID, r.PushID, r.Reason = "ops@example.com", b.app.ID, "psh_1", "ticket 7"
	r.UserIDs, r.UserCount = []string{"u1", "u2", "u1"}, 3
	failed := accessRec("POST /login", b.now)
	failed.Actor, failed.Email, failed.Status = nil, "who@example.com", 401
	out := b.appendAccess(r, failed)
	got, _ := b.accessPage(access.Filter{})
	if len(got) != 2 {
		t.Fatalf("listed %d records, want 2", len(got))
	}
	for i := range got {
		if string(got[i].Canonical()) != string(out[i].Canonical()) || got[i].Hash != out[i].Hash {
			t.Errorf("record %d read back:\n got %s\nwant %s", i, got[i].Canonical(), out[i].Canonical())
		}
	}
	if !got[0].At.Equal(b.now.Add(1234 * time.Millisecond)) {
		t.Errorf("at: got %v, want it kept to the millisecond", got[0].At)
	}
	if got[1].Actor != nil || !slices.Equal(got[1].UserIDs, []string{}) {
		t.Errorf("failed sign-in: actor %v, userIds %#v; want nil and []", got[1].Actor, got[1].UserIDs)
	}
}

func testAccessFilters(t *testing.T, b *bundle) {
	op := "op_1"
	r1 := accessRec("GET /x", b.now)
	r1.AppID, r1.UserIDs, r1.UserCount = "app_1", []string{"alice", "bob"}, 2
	r2 := accessRec("GET /y", b.now.Add(time.Minute))
	r2.Actor, r2.AppID, r2.UserIDs, r2.UserCount = &op, "app_2", []string{"bob"}, 1
	r3 := accessRec("GET /z", b.now.Add(2*time.Minute))
	r3.Actor = &op
	b.appendAccess(r1, r2, r3)
	for _, tc := range []struct {
		name string
		f    access.Filter
		want []int64
	}{
		{"none", access.Filter{}, []int64{1, 2, 3}},
		{"from inclusive", access.Filter{From: b.now.Add(time.Minute)}, []int64{2, 3}},
		{"to exclusive", access.Filter{To: b.now.Add(time.Minute)}, []int64{1}},
		{"actor", access.Filter{Actor: op}, []int64{2, 3}},
		{"owner", access.Filter{Actor: herald.OwnerID}, []int64{1}},
		{"appId", access.Filter{AppID: "app_2"}, []int64{2}},
		{"userId", access.Filter{UserID: "bob"}, []int64{1, 2}},
		{"userId alone", access.Filter{UserID: "alice"}, []int64{1}},
		{"all of them", access.Filter{Actor: op, UserID: "bob", From: b.now}, []int64{2}},
		{"nothing", access.Filter{UserID: "carol"}, []int64{}},
	} {
		if got, _ := b.accessPage(tc.f); !slices.Equal(seqs(got), tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, seqs(got), tc.want)
		}
	}
}

func testAccessPages(t *testing.T, b *bundle) {
	for range 5 {
		b.appendAccess(accessRec("GET /p", b.now))
	}
	var pages [][]int64
	f := access.Filter{Limit: 2}
	for {
		recs, next := b.accessPage(f)
		pages = append(pages, seqs(recs))
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if fmt.Sprint(pages) != "[[1 2] [3 4] [5]]" {
		t.Errorf("pages: got %v, want [[1 2] [3 4] [5]]", pages)
	}
	for _, f := range []access.Filter{{Limit: 0}, {Limit: access.MaxLimit + 1}, {Limit: 1, Cursor: "x"}} {
		if _, _, err := b.s.AccessRecords(b.ctx, f); !errors.Is(err, herald.ErrInvalidRequest) {
			t.Errorf("AccessRecords(%+v): got %v, want ErrInvalidRequest", f, err)
		}
	}
}

func testAccessEach(t *testing.T, b *bundle) {
	r := accessRec("GET /u", b.now)
	r.UserIDs, r.UserCount = []string{"bob"}, 1
	b.appendAccess(accessRec("GET /a", b.now), r, accessRec("GET /b", b.now), r)
	var got []int64
	must(t, "EachAccessRecord", b.s.EachAccessRecord(b.ctx, access.Filter{UserID: "bob", Limit: 1},
		func(r access.Record) error { got = append(got, r.Seq); return nil }))
	if !slices.Equal(got, []int64{2, 4}) {
		t.Errorf("each of bob's: got %v, want [2 4] (the limit ignored)", got)
	}
	stop := errors.New("stop")
	if err := b.s.EachAccessRecord(b.ctx, access.Filter{}, func(access.Record) error { return stop }); err != stop {
		t.Errorf("each whose fn fails: got %v, want its error", err)
	}
}

func testAccessTampered(t *testing.T, b *bundle) {
	for range 4 {
		b.appendAccess(accessRec("GET /t", b.now))
	}
	must(t, "Exec", b.h.Exec(b.ctx, `UPDATE access_records SET status = 204 WHERE seq = 3`))
	b.wantVerdict(false, 4, 3)
}

func testAccessMissingEnd(t *testing.T, b *bundle) {
	for range 3 {
		b.appendAccess(accessRec("GET /t", b.now))
	}
	must(t, "Exec", b.h.Exec(b.ctx, `DELETE FROM access_records WHERE seq = 3`))
	b.wantVerdict(false, 2, 3)
}

func testAccessPrune(t *testing.T, b *bundle) {
	start := b.now
	for i := range 6 {
		b.appendAccess(accessRec("GET /old", start.Add(time.Duration(i)*time.Hour)))
	}
	n, err := b.s.PruneAccessRecords(b.ctx, start.Add(3*time.Hour), 2)
	if err != nil || n != 2 {
		t.Fatalf("prune of at most 2: got %d, %v; want 2", n, err)
	}
	b.wantVerdict(true, 4, 0)
	n, err = b.s.PruneAccessRecords(b.ctx, start.Add(3*time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("prune the rest before 3h: got %d, %v; want 1", n, err)
	}
	got, _ := b.accessPage(access.Filter{})
	if !slices.Equal(seqs(got), []int64{4, 5, 6}) {
		t.Errorf("after pruning: %v, want [4 5 6]", seqs(got))
	}
	b.wantVerdict(true, 3, 0)
	b.appendAccess(accessRec("GET /new", start.Add(7*time.Hour)))
	b.wantVerdict(true, 4, 0)
	if n, err := b.s.PruneAccessRecords(b.ctx, start.Add(8*time.Hour), 100); err != nil || n != 4 {
		t.Fatalf("prune all: got %d, %v; want 4", n, err)
	}
	b.wantVerdict(true, 0, 0)
	if out := b.appendAccess(accessRec("GET /after", start.Add(9*time.Hour))); out[0].Seq != 8 {
		t.Errorf("after pruning all: seq %d, want 8", out[0].Seq)
	}
	b.wantVerdict(true, 1, 0)
}

func testAccessConcurrent(t *testing.T, b *bundle) {
	const each = 10
	var wg sync.WaitGroup
	var e errs
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				_, err := b.s.AppendAccessRecords(b.ctx, accessKey, []access.Record{accessRec(fmt.Sprintf("GET /w%d/%d", w, i), b.now)})
				e.add(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	e.report(t, "AppendAccessRecords")
	b.wantVerdict(true, writers*each, 0)
	got, _ := b.accessPage(access.Filter{Limit: access.MaxLimit})
	if len(got) != writers*each || got[len(got)-1].Seq != writers*each {
		t.Errorf("records: %d, last seq %d; want %d without gaps", len(got), got[len(got)-1].Seq, writers*each)
	}
}

func testAccessPastDeadline(t *testing.T, b *bundle) {
	if _, err := b.s.AppendAccessRecords(b.expired(), accessKey, []access.Record{accessRec("GET /late", b.now)}); !errors.Is(err, herald.ErrUnavailable) {
		t.Errorf("append past its deadline: got %v, want ErrUnavailable", err)
	}
	if out := b.appendAccess(accessRec("GET /next", b.now)); out[0].Seq != 1 {
		t.Errorf("the next append: seq %d, want 1 (nothing written before)", out[0].Seq)
	}
	b.wantVerdict(true, 1, 0)
}

// testAccessForged: a record rewritten by someone who can write the
// database but lacks the key, its hash made to hold and the chain
// relinked, fails its hmac.
func testAccessForged(t *testing.T, b *bundle) {
	recs := b.appendAccess(accessRec("GET /a", b.now), accessRec("GET /b", b.now), accessRec("GET /c", b.now))
	forged := recs[2]
	forged.Status = 500
	forged.Chain(forged.Seq, forged.PrevHash, access.Key("a guess"))
	must(t, "Exec", b.h.Exec(b.ctx, fmt.Sprintf(`UPDATE access_records SET status = 500, hash = '%s', hmac = '%s' WHERE seq = 3`, forged.Hash, forged.HMAC)))
	must(t, "Exec", b.h.Exec(b.ctx, fmt.Sprintf(`UPDATE access_chain SET hash = '%s' WHERE id = 1`, forged.Hash)))
	b.wantVerdict(false, 3, 3)
	must(t, "Exec", b.h.Exec(b.ctx, `UPDATE access_records SET hmac = '' WHERE seq = 3`))
	b.wantVerdict(false, 3, 3) // unsigned after a signed record
}

// testAccessHeadCutTail: records cut from the chain's end, and its head
// row set back to match, verify without a head (nothing left in the
// database tells), but not against a head kept from before the cut
// (M2); appends after the cut do not hide it.
func testAccessHeadCutTail(t *testing.T, b *bundle) {
	for i := range 6 {
		b.appendAccess(accessRec(fmt.Sprintf("GET /%d", i), b.now))
	}
	head, err := b.s.AccessHead(b.ctx)
	must(t, "AccessHead", err)
	if head.Seq != 6 || !accessKey.Signs(head.Hash, head.HMAC) {
		t.Fatalf("head: %+v, want seq 6 signed with the key", head)
	}
	b.wantVerdictWith(&head, true, 6, 0)
	kept := b.accessPageAll()[2]
	must(t, "Exec", b.h.Exec(b.ctx, `DELETE FROM access_records WHERE seq > 3`))
	must(t, "Exec", b.h.Exec(b.ctx, fmt.Sprintf(`UPDATE access_chain SET seq = 3, hash = '%s' WHERE id = 1`, kept.Hash)))
	b.appendAccess(accessRec("GET /after", b.now))
	b.wantVerdict(true, 4, 0)
	b.wantVerdictWith(&head, false, 4, 5) // the first of the head's records missing
	for range 4 {
		b.appendAccess(accessRec("GET /more", b.now))
	}
	b.wantVerdictWith(&head, false, 8, 6) // seq 6 is another record now
}

func (b *bundle) accessPageAll() []access.Record {
	b.t.Helper()
	recs, _ := b.accessPage(access.Filter{Limit: access.MaxLimit})
	return recs
}

// testAccessHeadForged: a head whose hmac is not the key's is refused.
func testAccessHeadForged(t *testing.T, b *bundle) {
	b.appendAccess(accessRec("GET /a", b.now))
	head, err := b.s.AccessHead(b.ctx)
	must(t, "AccessHead", err)
	head.HMAC = access.Key("a guess").Sign(head.Hash)
	if _, err := b.s.VerifyAccessRecords(b.ctx, accessKey, &head); !errors.Is(err, herald.ErrInvalidRequest) {
		t.Errorf("verify with a head another key signed: got %v, want ErrInvalidRequest", err)
	}
}

// testAttemptsRecorded: the refused attempts of a window become one
// record with their count once the window has ended, on whichever call
// gets there first, and never twice.
func testAttemptsRecorded(t *testing.T, b *bundle) {
	start := b.now
	for range identity.AttemptLimit + 7 {
		_, err := b.s.CountAttempt(b.ctx, []string{identity.AddressKey("192.0.2.1"), identity.TypedEmailKey("kim@example.com")}, identity.AttemptLimit, start)
		must(t, "CountAttempt", err)
	}
	for range 3 {
		_, err := b.s.CountAttempt(b.ctx, []string{identity.BearerKey("192.0.2.1")}, 0, start)
		must(t, "CountAttempt", err)
	}
	if n, err := b.s.RecordPending(b.ctx, accessKey, start.Add(identity.AttemptWindow-time.Second)); err != nil || n != 0 {
		t.Errorf("RecordPending before the window ended: %d, %v; want 0", n, err)
	}
	// A new attempt after the window keeps the ended window's count.
	_, err := b.s.CountAttempt(b.ctx, []string{identity.AddressKey("192.0.2.1")}, identity.AttemptLimit, start.Add(identity.AttemptWindow))
	must(t, "CountAttempt", err)
	var e errs
	var wg sync.WaitGroup
	counts := make(chan int, 4)
	for range 4 {
		wg.Go(func() {
			n, err := b.s.RecordPending(b.ctx, accessKey, start.Add(identity.AttemptWindow))
			e.add(err)
			counts <- n
		})
	}
	wg.Wait()
	close(counts)
	e.report(t, "RecordPending")
	total := 0
	for n := range counts {
		total += n
	}
	recs := b.accessPageAll()
	if total != 3 || len(recs) != 3 {
		t.Fatalf("aggregated records: %d appended, %d in the chain; want 3 (address, email, bearer)", total, len(recs))
	}
	got := map[string]int{}
	for _, r := range recs {
		got[r.Route+" "+r.IP+r.Email] = r.Count
		if !r.At.Equal(start.Truncate(time.Millisecond).UTC()) || r.Actor != nil {
			t.Errorf("record %+v: want at the window's start, no actor", r)
		}
	}
	want := map[string]int{"POST /login 192.0.2.1": 7, "POST /login kim@example.com": 7, "/admin/v1/ 192.0.2.1": 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts: got %v, want %v", got, want)
	}
	b.wantVerdict(true, 3, 0)
}
