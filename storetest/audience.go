package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
)

// AudienceCounter counts a filter's audience (DESIGN 13's audience count).
type AudienceCounter interface {
	// CountAudience counts the app's devices whose (user, device) pair the
	// filter holds for at now, and the users they make (each unmapped
	// device one).
	CountAudience(ctx context.Context, appID string, f audience.Filter, now time.Time) (audience.Count, error)
}

var audienceTests = []test{
	{"Filter/MatchesEvaluator", testFilterMatchesEvaluator},
	{"TagsOfUsers", testTagsOfUsers},
	{"Filter/Scale", testAudienceScale},
}

// dayMS is a day in milliseconds, lastSeenDays' unit.
const dayMS = 24 * 60 * 60 * 1000

// The vocabulary a population and its filters draw from, chosen so that
// filters meet their edges: the empty string, strings that are prefixes of
// each other, non-ASCII (composed and not, four-byte), ISO dates, negative
// and fractional numbers, -0, unreadable versions.
var (
	popTagNames = []string{"plan", "age", "vip", "since", "x.y-z_1"}
	popStrings  = []string{"", "a", "ab", "abc", "b", "가", "가나", "é", "e\u0301", "Z", "~", "ÿ", "😀", "a😀", "2024-01-01", "2024-12-31", "2025-06-11T00:00",
		"true", "false", "1", "-1", "2.5", "0", // the texts of other kinds: "1" is not 1
		// the edges of a prefix's upper bound: the character after the last
		// one's (U+007F to U+0080 changes length, U+D7FF skips the
		// surrogates), and U+10FFFF, which has none
		"\u007f", "\u0080", "a\u007f", "\ud7ff", "\ue000", "\U0010FFFF", "\U0010FFFFa", "a\U0010FFFF", "b\U0010FFFF\U0010FFFF", "각"}
	popNumbers   = []float64{0, math0(), 1, -1, 2.5, -2.5, 0.1, 0.30000000000000004, 31, 1e6, -1e21, 123456789.125}
	popPlatforms = []string{"android", "ios", "web"}
	popLocales   = []string{"", "ko", "ko-KR", "en", "en-US", "e", "pt-BR", "zh-Hant-TW"}
	popZones     = []string{"", "Asia/Seoul", "Asia/Tokyo", "America/New_York", "UTC"}
	popVersions  = []string{"1.6.0", "1.10.0", "1.9.9", "2.0.0-beta", "10.0.0+build", "0.0.0", "1.6", "abc", ""}
)

// math0 is negative zero, which JSON can write and tags can hold.
func math0() float64 { z := 0.0; return -z }

// popDevice is one device of a generated population, as stored.
type popDevice struct {
	id, user               string // user "" for none
	platform, locale, zone string
	version                string
	marketing, night       bool
	createdAt, lastSeenAt  int64
}

// population is a generated app: its devices and its users' tags.
type population struct {
	devices []popDevice
	tags    map[string]audience.Tags
}

func (p population) subject(d popDevice) audience.Subject {
	s := audience.Subject{Platform: herald.Platform(d.platform), Locale: d.locale, TimeZone: d.zone, AppSourceVersion: d.version,
		Marketing: d.marketing, MarketingNight: d.night, CreatedAt: time.UnixMilli(d.createdAt), LastSeenAt: time.UnixMilli(d.lastSeenAt)}
	if d.user != "" {
		s.Tags = p.tags[d.user]
		if s.Tags == nil {
			s.Tags = audience.Tags{}
		}
	}
	return s
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// genPopulation makes about 60 devices: some unmapped, the rest of users
// with 1 to 4 devices, and users with tags and no device.
func genPopulation(r *rand.Rand, now int64) population {
	p := population{tags: map[string]audience.Tags{}}
	n := 0
	device := func(user string) {
		d := popDevice{id: fmt.Sprintf("d%02d", n), user: user, platform: pick(r, popPlatforms), locale: pick(r, popLocales),
			zone: pick(r, popZones), version: pick(r, popVersions), marketing: r.IntN(2) == 0, night: r.IntN(2) == 0}
		d.createdAt = now - int64(r.IntN(400))*dayMS - int64(r.IntN(3)-1)
		if r.IntN(4) == 0 {
			d.createdAt = time.UnixMilli(d.createdAt).UTC().Truncate(24 * time.Hour).UnixMilli() // a midnight
		}
		switch r.IntN(5) {
		case 0:
			d.lastSeenAt = 0 // never seen since the column was added
		case 1:
			d.lastSeenAt = now + int64(r.IntN(2*dayMS)) // a skewed clock: ahead of now
		default: // on, or a millisecond either side of, a day's boundary
			d.lastSeenAt = now - int64(r.IntN(10))*dayMS + int64(r.IntN(3)-1)
		}
		p.devices = append(p.devices, d)
		n++
	}
	for range 12 {
		device("")
	}
	for u := 0; n < 60; u++ {
		user := "u" + strconv.Itoa(u)
		p.tags[user] = genTags(r)
		for range r.IntN(5) { // 0 to 4 devices
			device(user)
		}
	}
	r.Shuffle(len(p.devices), func(i, j int) { p.devices[i], p.devices[j] = p.devices[j], p.devices[i] })
	return p
}

func genTags(r *rand.Rand) audience.Tags {
	tags := audience.Tags{}
	for _, name := range popTagNames {
		if r.IntN(3) > 0 {
			tags[name] = genValue(r)
		}
	}
	return tags
}

func genValue(r *rand.Rand) audience.Value {
	switch r.IntN(3) {
	case 0:
		return audience.String(pick(r, popStrings))
	case 1:
		return audience.Number(pick(r, popNumbers))
	}
	return audience.Bool(r.IntN(2) == 0)
}

// load stores the population in the bundle's app: devices through
// RegisterDevice, then their audience columns, and the tags, by SQL.
func (b *bundle) load(p population) {
	b.t.Helper()
	var sql strings.Builder
	for _, d := range p.devices {
		b.register(d.id, "t-"+d.id, d.user)
		fmt.Fprintf(&sql, "UPDATE devices SET platform = %s, locale = %s, time_zone = %s, app_source_version = %s, version_key = %s, "+
			"marketing = %s, marketing_night = %s, created_at = %d, last_seen_at = %d WHERE app_id = %s AND device_id = %s;\n",
			lit(d.platform), lit(d.locale), lit(d.zone), lit(d.version), lit(herald.VersionKey(d.version)),
			strings.ToUpper(strconv.FormatBool(d.marketing)), strings.ToUpper(strconv.FormatBool(d.night)),
			d.createdAt, d.lastSeenAt, lit(b.app.ID), lit(d.id))
	}
	for user, tags := range p.tags {
		if _, _, err := b.s.User(b.ctx, b.app.ID, user); err != nil { // a user with no device
			b.register("gone-"+user, "t-gone-"+user, user)
			fmt.Fprintf(&sql, "DELETE FROM devices WHERE app_id = %s AND device_id = %s;\n", lit(b.app.ID), lit("gone-"+user))
		}
		for name, v := range tags {
			num := "NULL"
			if v.Kind == audience.KindNumber {
				num = strconv.FormatFloat(v.Num, 'g', -1, 64)
			}
			kind := map[audience.Kind]string{audience.KindString: "s", audience.KindNumber: "n", audience.KindBool: "b"}[v.Kind]
			fmt.Fprintf(&sql, "INSERT INTO user_tags (app_id, user_id, name, kind, text_value, num_value) VALUES (%s, %s, %s, '%s', %s, %s);\n",
				lit(b.app.ID), lit(user), lit(name), kind, lit(v.Text()), num)
		}
	}
	must(b.t, "load the population", b.h.Exec(b.ctx, sql.String()))
}

// lit is s as an SQL string literal.
func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// treeGen writes random filters in JSON over the population's vocabulary.
type treeGen struct {
	r     *rand.Rand
	dates []string // createdAt values: the devices' own, and midnights
}

// tree returns a node depth deep (1 is the root) of at most room leaves.
func (g treeGen) tree(depth int, room *int) string {
	if depth < audience.MaxDepth && *room > 1 && g.r.IntN(3) > 0 {
		switch g.r.IntN(3) {
		case 0:
			return `{"not":` + g.tree(depth+1, room) + `}`
		default:
			kind := pick(g.r, []string{"and", "or"})
			var children []string
			for range 1 + g.r.IntN(3) {
				if *room > 0 {
					children = append(children, g.tree(depth+1, room))
				}
			}
			return `{"` + kind + `":[` + strings.Join(children, ",") + `]}`
		}
	}
	*room--
	if g.r.IntN(2) == 0 {
		return g.tagLeaf()
	}
	return g.fieldLeaf()
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (g treeGen) tagLeaf() string {
	name := pick(g.r, popTagNames)
	if g.r.IntN(10) == 0 {
		name = "missing"
	}
	leaf := func(op string, v any) string { return `{"tag":` + js(name) + `,"` + op + `":` + js(v) + `}` }
	switch op := pick(g.r, []string{"eq", "ne", "in", "exists", "gt", "gte", "lt", "lte", "prefix"}); op {
	case "eq", "ne":
		return leaf(op, genValue(g.r))
	case "in":
		vs := make([]audience.Value, 1+g.r.IntN(4))
		for i := range vs {
			vs[i] = genValue(g.r)
		}
		return leaf(op, vs)
	case "exists":
		return leaf(op, g.r.IntN(2) == 0)
	case "prefix":
		return leaf(op, pick(g.r, popStrings))
	default:
		if g.r.IntN(2) == 0 {
			return leaf(op, pick(g.r, popNumbers))
		}
		return leaf(op, pick(g.r, popStrings))
	}
}

func (g treeGen) fieldLeaf() string {
	leaf := func(field, op string, v any) string { return `{"field":"` + field + `","` + op + `":` + js(v) + `}` }
	nonEmpty := func(xs []string) string {
		for {
			if x := pick(g.r, xs); x != "" {
				if g.r.IntN(4) == 0 { // a prefix of a value
					return string([]rune(x)[:1+g.r.IntN(len([]rune(x)))])
				}
				return x
			}
		}
	}
	text := func(field string, xs []string, exists bool) string {
		ops := []string{"eq", "ne", "in", "prefix"}
		if exists {
			ops = append(ops, "exists")
		}
		switch op := pick(g.r, ops); op {
		case "in":
			return leaf(field, op, []string{nonEmpty(xs), nonEmpty(xs)})
		case "exists":
			return leaf(field, op, g.r.IntN(2) == 0)
		default:
			return leaf(field, op, nonEmpty(xs))
		}
	}
	ordered := []string{"eq", "ne", "gt", "gte", "lt", "lte"}
	switch g.r.IntN(8) {
	case 0:
		op := pick(g.r, []string{"eq", "ne", "in"})
		if op == "in" {
			return leaf("platform", op, []string{pick(g.r, popPlatforms), pick(g.r, popPlatforms)})
		}
		return leaf("platform", op, pick(g.r, popPlatforms))
	case 1:
		return text("locale", popLocales, true)
	case 2:
		return text("timeZone", popZones, true)
	case 3:
		if g.r.IntN(2) == 0 {
			return text("appSourceVersion", popVersions, false)
		}
		v := pick(g.r, []string{"1.6.0", "1.10.0", "1.9.9", "2.0.0", "0.0.0", "1.6.0-rc.1", "10.0.0"})
		return leaf("appSourceVersion", pick(g.r, ordered[2:]), v)
	case 4:
		return leaf("marketing", pick(g.r, ordered[:2]), g.r.IntN(2) == 0)
	case 5:
		return leaf("marketingNight", pick(g.r, ordered[:2]), g.r.IntN(2) == 0)
	case 6:
		return leaf("lastSeenDays", pick(g.r, ordered), g.r.IntN(12))
	default:
		return leaf("createdAt", pick(g.r, ordered), pick(g.r, g.dates))
	}
}

// audienceSeed is the seed of the differential test: HERALD_AUDIENCE_SEED
// to repeat a failure, else a new one each run (printed when it fails).
func audienceSeed(t *testing.T) uint64 {
	if s := os.Getenv("HERALD_AUDIENCE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		must(t, "HERALD_AUDIENCE_SEED", err)
		return n
	}
	return uint64(time.Now().UnixNano())
}

// testFilterMatchesEvaluator is the differential test of filters: on a
// random population, the devices DevicePage selects for a random filter
// (in its order, in small pages) and CountAudience's counts are exactly
// what audience.Filter.Match says, for 250 filters.
func testFilterMatchesEvaluator(t *testing.T, b *bundle) {
	counter, ok := b.s.(AudienceCounter)
	if !ok {
		t.Fatal("the store does not count audiences")
	}
	seed := audienceSeed(t)
	r := rand.New(rand.NewPCG(seed, 0))
	now := b.now.UnixMilli()
	pop := genPopulation(r, now)
	b.load(pop)
	other := b.newApp("other") // a device of another app never counts
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d00", "t-other", ""))
	must(t, "RegisterDevice", err)
	g := treeGen{r: r, dates: []string{"2025-06-11", "2025-01-01", "2024-06-11T13:04:30Z"}}
	for _, d := range pop.devices[:10] {
		g.dates = append(g.dates, time.UnixMilli(d.createdAt).UTC().Format(time.RFC3339Nano))
	}
	order := slices.Clone(pop.devices) // DeviceCursor's order
	slices.SortFunc(order, func(x, y popDevice) int {
		return cmp.Or(cmp.Compare(boolInt(x.user != ""), boolInt(y.user != "")), strings.Compare(x.user, y.user), strings.Compare(x.id, y.id))
	})
	for i := range 250 {
		room := 1 + r.IntN(12)
		tree := g.tree(1, &room)
		f, details := audience.Parse(json.RawMessage(tree))
		if details != nil {
			t.Fatalf("seed %d: the generator wrote %s, refused: %v", seed, tree, details)
		}
		var want []string
		users := map[string]bool{}
		for _, d := range order {
			if f.Match(pop.subject(d), b.now) {
				want = append(want, d.id)
				users[cmp.Or(d.user, "device:"+d.id)] = true
			}
		}
		size := pick(r, []int{2, 3, 5, 7, 64})
		got, err := b.pageFiltered(sendstore.Selection{Filter: &f, Now: b.now}, size)
		if err != nil || !slices.Equal(idsInOrder(got), want) {
			t.Fatalf("seed %d, filter %d %s, pages of %d: got %v (%v), want %v", seed, i, tree, size, idsInOrder(got), err, want)
		}
		count, err := counter.CountAudience(b.ctx, b.app.ID, f, b.now)
		if wantCount := (audience.Count{Users: len(users), Devices: len(want)}); err != nil || count != wantCount {
			t.Fatalf("seed %d, filter %d %s: got count %+v (%v), want %+v", seed, i, tree, count, err, wantCount)
		}
	}
}

// testTagsOfUsers: the tags a push's templates read, on a random
// population, for random sets of names (ones with names between them in
// byte order that are not asked for, too): each user's tags of those names
// exactly, and no entry for a user with none of them.
func testTagsOfUsers(t *testing.T, b *bundle) {
	seed := audienceSeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	pop := genPopulation(r, b.now.UnixMilli())
	b.load(pop)
	users := []string{"nobody"} // not a user: no entry
	for u := range pop.tags {
		users = append(users, u)
	}
	for _, d := range pop.devices {
		if d.user != "" && !slices.Contains(users, d.user) {
			users = append(users, d.user)
		}
	}
	for i := range 40 {
		var names []string
		for _, n := range popTagNames {
			if r.IntN(2) == 0 {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			names = []string{pick(r, popTagNames)}
		}
		got, err := b.s.TagsOfUsers(b.ctx, b.app.ID, users, names)
		must(t, "TagsOfUsers", err)
		want := map[string]audience.Tags{}
		for u, tags := range pop.tags {
			for _, n := range names {
				if v, ok := tags[n]; ok {
					if want[u] == nil {
						want[u] = audience.Tags{}
					}
					want[u][n] = v
				}
			}
		}
		// A number compares as Go compares it: -0 is 0 (SQLite keeps -0 as 0).
		same := maps.EqualFunc(got, want, func(x, y audience.Tags) bool { return maps.Equal(x, y) })
		if !same {
			t.Fatalf("seed %d, set %d, names %v:\ngot  %v\nwant %v", seed, i, names, got, want)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pageFiltered reads the selection's devices in pages of size, checking
// that every page but the last is full.
func (b *bundle) pageFiltered(sel sendstore.Selection, size int) ([]herald.Device, error) {
	var all []herald.Device
	var after sendstore.DeviceCursor
	for {
		page, next, err := b.s.DevicePage(b.ctx, b.app.ID, sel, after, size)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < size {
			return all, nil
		}
		after = next
	}
}

// testAudienceScale measures (HERALD_AUDIENCE_SCALE=1; skipped otherwise)
// CountAudience and a whole paged DevicePage scan on 1,000,000 users
// (HERALD_AUDIENCE_USERS to change it) of one device each and three tags: plan ("p0" to "p999", so an equality
// selects 1,000 users), city ("c0" to "c49": the prefix "c4" selects 11 in
// 50) and score (a number, 0 to 99).
func testAudienceScale(t *testing.T, b *bundle) {
	if os.Getenv("HERALD_AUDIENCE_SCALE") != "1" {
		t.Skip("HERALD_AUDIENCE_SCALE=1 measures filters on 1,000,000 users")
	}
	users := 1_000_000
	if s := os.Getenv("HERALD_AUDIENCE_USERS"); s != "" {
		n, err := strconv.Atoi(s)
		must(t, "HERALD_AUDIENCE_USERS", err)
		if n < 1000 {
			t.Fatalf("HERALD_AUDIENCE_USERS %d: at least 1000", n)
		}
		users = n
	}
	now := b.now.UnixMilli()
	app := lit(b.app.ID)
	series := fmt.Sprintf("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d) ", users-1)
	start := time.Now()
	for _, stmt := range []string{
		"INSERT INTO users (app_id, user_id, state, created_at, updated_at) " + series + "SELECT " + app + ", 'u' || i, 'registered', 0, 0 FROM n",
		"INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night, created_at, " +
			"token_updated_at, locale, time_zone, last_seen_at, version_key) " + series + "SELECT " + app + ", 'd' || i, 't' || i, " +
			"CASE i % 3 WHEN 0 THEN 'android' WHEN 1 THEN 'ios' ELSE 'web' END, '1.6.0', 'u' || i, i % 2 = 0, FALSE, 0, 0, 'ko-KR', " +
			fmt.Sprintf("'Asia/Seoul', %d - (i %% 30) * CAST(%d AS BIGINT), %s FROM n", now, dayMS, lit(herald.VersionKey("1.6.0"))),
		"INSERT INTO user_tags (app_id, user_id, name, kind, text_value, num_value) " + series + "SELECT " + app + ", 'u' || i, 'plan', 's', 'p' || (i % 1000), NULL FROM n",
		"INSERT INTO user_tags (app_id, user_id, name, kind, text_value, num_value) " + series + "SELECT " + app + ", 'u' || i, 'city', 's', 'c' || (i % 50), NULL FROM n",
		"INSERT INTO user_tags (app_id, user_id, name, kind, text_value, num_value) " + series + "SELECT " + app + ", 'u' || i, 'score', 'n', '' || (i % 100), i % 100 FROM n",
		"ANALYZE",
	} {
		must(t, "load", b.h.Exec(b.ctx, stmt))
	}
	t.Logf("loaded %d users, devices and %d tags in %v", users, 3*users, time.Since(start).Round(time.Millisecond))
	counter := b.s.(AudienceCounter)
	for _, tc := range []struct{ name, filter string }{
		{"tag eq", `{"tag":"plan","eq":"p7"}`},
		{"tag prefix", `{"tag":"city","prefix":"c4"}`},
		{"three leaves", `{"and":[{"tag":"plan","eq":"p7"},{"field":"platform","eq":"ios"},{"field":"lastSeenDays","lte":7}]}`},
	} {
		f, details := audience.Parse(json.RawMessage(tc.filter))
		if details != nil {
			t.Fatal(details)
		}
		start := time.Now()
		count, err := counter.CountAudience(b.ctx, b.app.ID, f, b.now)
		must(t, "CountAudience", err)
		counted := time.Since(start)
		start = time.Now()
		all, err := b.pageFiltered(sendstore.Selection{Filter: &f, Now: b.now}, 1000)
		must(t, "DevicePage", err)
		if len(all) != count.Devices {
			t.Errorf("%s: the pages have %d devices, the count %d", tc.name, len(all), count.Devices)
		}
		t.Logf("%-12s %7d devices: CountAudience %8v, DevicePage scan (pages of 1000) %8v", tc.name, count.Devices,
			counted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
}

// PlanFilters are filters of each kind of tag leaf, for the engines'
// tests of the plans of DevicePage and CountAudience: each tag look-up by
// the user's key, and a count by a tag's value from its index.
var PlanFilters = map[string]string{
	"eq": `{"tag":"plan","eq":"gold"}`, "ne": `{"tag":"plan","ne":"gold"}`,
	"in": `{"tag":"plan","in":["gold","silver"]}`, "exists": `{"tag":"plan","exists":true}`,
	"number eq": `{"tag":"level","eq":3}`, "number gte": `{"tag":"level","gte":1}`, "number lt": `{"tag":"level","lt":5}`,
	"string gt": `{"tag":"city","gt":"M"}`, "prefix": `{"tag":"city","prefix":"Seoul"}`,
	"three leaves": `{"and":[{"tag":"plan","in":["gold","silver"]},{"tag":"level","gte":1},{"tag":"city","prefix":"Seoul"}]}`,
	"or":           `{"or":[{"tag":"plan","eq":"gold"},{"and":[{"tag":"level","lt":2},{"field":"platform","eq":"ios"}]}]}`,
}
