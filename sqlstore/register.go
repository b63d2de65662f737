package sqlstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/heraldpush/herald"
)

// regItem is one registration (RegisterDevice) and its answer.
type regItem struct {
	appID string
	reg   herald.DeviceRegistration
	out   herald.Device
}

// keys are the rows the registration is about: its device, its token and
// its user. Two registrations with a key in common are not made together.
func (it *regItem) keys() []string {
	k := []string{"d\x00" + it.appID + "\x00" + it.reg.DeviceID, "t\x00" + it.appID + "\x00" + it.reg.Token}
	if it.reg.UserID != nil {
		k = append(k, "u\x00"+it.appID+"\x00"+*it.reg.UserID)
	}
	return k
}

// RegistrationJoiner is implemented by an engine on which the
// registrations of a batch are made together (registrations):
// PostgreSQL, where each statement costs the database CPU and its batch a
// share of a round trip. SQLite, whose statements are calls in process,
// makes each registration on its own: measured, the joint saved it some
// CPU per registration but not time (docs/notes/performance-passes.md, "registrations
// made together"), and the joint's multi-row writes are PostgreSQL's
// (arrays, see registerUsersSQL).
type RegistrationJoiner interface {
	JoinsRegistrations()
}

// registrations is RegisterDevice's joint (see Joint): the registrations
// of a batch made together, with the rules of one made alone. Their reads
// are one round trip: the devices by id, the devices holding the tokens,
// the apps' defaults, the users registered (one upsert of them all) and
// read; each table one statement for an app. Their writes are a second:
// the devices that lose a token to another deleted, the new devices
// inserted in one statement, each device that exists updated, guarded.
// Consent records, rare on this path (an app's default pair, a user's
// pair a device takes), are written for each registration as alone.
//
// Of the batch's registrations, one with a device, token or user in
// common with an earlier one is left to run alone after the others, as
// is every one when anything is not as the common case has it: a token
// held by a device that another registration of the batch registers, an
// app missing, a guarded write or an insert that lost a race with
// another writer. Their writes are undone, and each registration then
// meets the rule it meets alone.
type registrations struct{ s *UserStore }

// errJointMiss is what registrations.Join answers when its registrations
// are to run alone.
var errJointMiss = errors.New("sqlstore: registrations made alone")

// Join makes the registrations among items that have no key in common
// with an earlier one.
func (j *registrations) Join(ctx context.Context, tx Tx, items []any) ([]bool, error) {
	c := conn{q: tx, tx: tx, tr: j.s.translate, lw: j.s.lw, forUpdate: j.s.forUpdate}
	now := j.s.Now()
	ran := make([]bool, len(items))
	taken := map[string]bool{}
	var its []*regItem
	for i, x := range items {
		it := x.(*regItem)
		keys := it.keys()
		if slices.ContainsFunc(keys, func(k string) bool { return taken[k] }) {
			continue
		}
		for _, k := range keys {
			taken[k] = true
		}
		ran[i] = true
		its = append(its, it)
	}
	rd, err := readRegistrations(ctx, c, its, now)
	if err != nil {
		return nil, err
	}
	var writes []Stmt
	var inserts []herald.Device
	trails := make([]*consentLog, len(its))
	for i, it := range its {
		r, loser, err := rd.of(it)
		if err != nil {
			return nil, err
		}
		if loser != nil {
			if taken["d\x00"+it.appID+"\x00"+loser.ID] {
				return nil, errJointMiss // a token moving between two of the batch's devices
			}
			writes = append(writes, Stmt{Query: `DELETE FROM devices WHERE app_id = ? AND device_id = ? AND token = ?`,
				Args: []any{loser.AppID, loser.ID, loser.Token}})
		}
		if it.reg.IdentityRefused(r.old, r.isNew) {
			return nil, errJointMiss // alone, it answers the refusal
		}
		d, trail := registered(r, it.reg, now)
		if r.isNew {
			inserts = append(inserts, d)
		} else {
			writes = append(writes, updateDeviceStmt(r.old, d))
		}
		it.out, trails[i] = d, trail
	}
	if len(inserts) > 0 {
		writes = append(writes, Stmt{Query: insertDevicesSQL, Args: deviceArrays(inserts)})
	}
	if err := c.pipeline(ctx, writes...); err != nil {
		return nil, err
	}
	for _, trail := range trails {
		if err := trail.flush(ctx, c, now); err != nil {
			return nil, err
		}
	}
	return ran, nil
}

// regReads is what the registrations of a joint read, by app and key.
type regReads struct {
	devices, holders map[string]herald.Device // by app and device id; by app and token
	users            map[string]herald.User   // by app and user id
	apps             map[string]*herald.App   // nil: the app is missing
}

// of is what readRegistration reads for it, and the device that loses its
// token to it (nil for none). errJointMiss when it cannot be made here.
func (rd regReads) of(it *regItem) (registration, *herald.Device, error) {
	app := rd.apps[it.appID]
	r := registration{app: herald.App{ID: it.appID}}
	var ok bool
	if r.old, ok = rd.devices[it.appID+"\x00"+it.reg.DeviceID]; !ok {
		if app == nil {
			return r, nil, errJointMiss // alone, it answers the app's error
		}
		r.isNew, r.app = true, *app
	}
	if it.reg.UserID != nil {
		if r.user, ok = rd.users[it.appID+"\x00"+*it.reg.UserID]; !ok {
			return r, nil, errJointMiss
		}
	}
	if h, ok := rd.holders[it.appID+"\x00"+it.reg.Token]; ok && h.ID != it.reg.DeviceID {
		return r, &h, nil
	}
	return r, nil, nil
}

// Lookups of the registrations' reads.
var (
	devicesByTokenLookup = Lookup{Table: `devices`, Columns: deviceColumns, Scope: `app_id`, Key: `token`}
	usersByIDLookup      = Lookup{Table: `users`, Columns: userColumns, Scope: `app_id`, Key: `user_id`}
)

// readRegistrations registers the users the registrations name (one
// upsert, registerUserSQL's, of each app's) and reads, in one round trip,
// each app's defaults, its devices by id and by token, and its users.
// Every key is distinct (Join's rule), and the users are upserted in
// order of id, so two batches at once lock them in one order.
func readRegistrations(ctx context.Context, c conn, its []*regItem, now time.Time) (regReads, error) {
	rd := regReads{devices: map[string]herald.Device{}, holders: map[string]herald.Device{},
		users: map[string]herald.User{}, apps: map[string]*herald.App{}}
	byApp := map[string][]*regItem{}
	var appIDs []string
	for _, it := range its {
		if _, ok := byApp[it.appID]; !ok {
			appIDs = append(appIDs, it.appID)
		}
		byApp[it.appID] = append(byApp[it.appID], it)
	}
	write := InListLookup
	if c.lw != nil {
		write = c.lw.LookupQuery
	}
	var stmts []Stmt
	lookup := func(l Lookup, appID string, keys []string, each func(Row) error) {
		q, args := write(l, appID, keys)
		stmts = append(stmts, Stmt{Query: q, Args: args, Each: each})
	}
	for _, appID := range appIDs {
		var deviceIDs, tokens, userIDs []string
		for _, it := range byApp[appID] {
			deviceIDs, tokens = append(deviceIDs, it.reg.DeviceID), append(tokens, it.reg.Token)
			if it.reg.UserID != nil {
				userIDs = append(userIDs, *it.reg.UserID)
			}
		}
		stmts = append(stmts, Stmt{Query: appDefaultsSQL, Args: []any{appID}, Row: func(row Row) error {
			a := herald.App{ID: appID}
			err := row.Scan(&a.DefaultConsent.Marketing, &a.DefaultConsent.MarketingNight)
			if errors.Is(err, herald.ErrNotFound) {
				return nil // missing: an answer only for a new device
			}
			rd.apps[appID] = &a
			return err
		}})
		lookup(DevicesByIDLookup, appID, deviceIDs, func(row Row) error {
			d, err := scanDevice(row)
			rd.devices[appID+"\x00"+d.ID] = d
			return err
		})
		lookup(devicesByTokenLookup, appID, tokens, func(row Row) error {
			d, err := scanDevice(row)
			rd.holders[appID+"\x00"+d.Token] = d
			return err
		})
		if len(userIDs) == 0 {
			continue
		}
		slices.Sort(userIDs)
		stmts = append(stmts, Stmt{Query: registerUsersSQL, Args: []any{appID, userIDs, now.UnixMilli()}})
		lookup(usersByIDLookup, appID, userIDs, func(row Row) error {
			u, err := scanUser(row)
			rd.users[appID+"\x00"+u.ID] = u
			return err
		})
	}
	return rd, c.pipeline(ctx, stmts...)
}

// The joint's writes of many rows are PostgreSQL's (the joint runs on
// it only, see RegistrationJoiner): the rows come as arrays, one for each
// column, so that a statement is one text for any number of rows,
// prepared once on a connection, where a VALUES list of n rows is a
// statement of its own for each n, parsed and planned again for each. The
// arrays are InitPlans' values, as a lookup's keys (see postgres's
// LookupQuery), so that PostgreSQL keeps the statement's generic plan.

// registerUsersSQL is registerUserSQL for the users ?2 (an array, in
// order of id) of the app ?1 at ?3, without its RETURNING (the users are
// read after it).
const registerUsersSQL = `INSERT INTO users (app_id, user_id, state, created_at, updated_at)
	SELECT ?1, u.user_id, 'registered', ?3, ?3 FROM unnest((SELECT CAST(?2 AS TEXT[]))) AS u(user_id)
	ON CONFLICT (app_id, user_id) DO UPDATE SET state = 'registered', withdrawn_at = NULL, updated_at = excluded.updated_at
	WHERE users.state = 'withdrawn'`

// insertDevicesSQL inserts the devices deviceArrays holds.
const insertDevicesSQL = `INSERT INTO devices (` + deviceWriteColumns + `)
	SELECT * FROM unnest((SELECT CAST(?1 AS TEXT[])), (SELECT CAST(?2 AS TEXT[])), (SELECT CAST(?3 AS TEXT[])),
		(SELECT CAST(?4 AS TEXT[])), (SELECT CAST(?5 AS TEXT[])), (SELECT CAST(?6 AS TEXT[])),
		(SELECT CAST(?7 AS BOOLEAN[])), (SELECT CAST(?8 AS BOOLEAN[])), (SELECT CAST(?9 AS BIGINT[])),
		(SELECT CAST(?10 AS BIGINT[])), (SELECT CAST(?11 AS TEXT[])), (SELECT CAST(?12 AS TEXT[])),
		(SELECT CAST(?13 AS BIGINT[])), (SELECT CAST(?14 AS TEXT[])))`

// deviceArrays is ds as insertDevicesSQL's arguments: one array for each
// of deviceWriteColumns (deviceRow's values, by column).
func deviceArrays(ds []herald.Device) []any {
	n := len(ds)
	appIDs, ids, tokens := make([]string, n), make([]string, n), make([]string, n)
	platforms, versions, userIDs := make([]string, n), make([]string, n), make([]*string, n)
	marketing, night := make([]bool, n), make([]bool, n)
	created, updated, seen := make([]int64, n), make([]int64, n), make([]int64, n)
	locales, zones, keys := make([]string, n), make([]string, n), make([]string, n)
	for i, d := range ds {
		appIDs[i], ids[i], tokens[i] = d.AppID, d.ID, d.Token
		platforms[i], versions[i], userIDs[i] = string(d.Platform), d.AppSourceVersion, d.UserID
		marketing[i], night[i] = d.Consent.Marketing, d.Consent.MarketingNight
		created[i], updated[i], seen[i] = d.CreatedAt.UnixMilli(), d.TokenUpdatedAt.UnixMilli(), d.LastSeenAt.UnixMilli()
		locales[i], zones[i], keys[i] = d.Locale, d.TimeZone, herald.VersionKey(d.AppSourceVersion)
	}
	return []any{appIDs, ids, tokens, platforms, versions, userIDs, marketing, night, created, updated, locales, zones, seen, keys}
}
