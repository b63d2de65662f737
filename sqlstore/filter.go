package sqlstore

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
)

// dayMS is a day in milliseconds, the unit of lastSeenDays.
const dayMS = 24 * 60 * 60 * 1000

// filterSQL compiles a filter into a condition over `devices d` in the
// shared dialect, with its arguments in order, judged at now. It selects
// exactly the pairs audience.Filter.Match holds for (storetest proves it on
// both engines): a tag leaf is an EXISTS on user_tags by its primary key,
// false for a device with no user (user_id NULL matches no row), so every
// part is true or false, never NULL, and NOT negates it as Match does.
func filterSQL(f audience.Filter, now time.Time) (string, []any, error) {
	return filterFromSQL(f, now, nil)
}

// filterFromSQL is filterSQL for devices whose user_id is at least
// *userFrom (nil: any), which the caller's condition must say: each tag
// look-up then also bounds t.user_id from below, which the planner does not
// derive from t.user_id = d.user_id, so that a join it makes of a tag leaf
// (PostgreSQL merges the tags' primary key with the devices' index) starts
// at a page's cursor instead of at the app's first user.
func filterFromSQL(f audience.Filter, now time.Time, userFrom *string) (string, []any, error) {
	c := compiler{now: now.UnixMilli(), userFrom: userFrom}
	if err := c.node(f.Root); err != nil {
		return "", nil, err
	}
	return c.b.String(), c.args, nil
}

// compiler writes a filter's condition and gathers its arguments.
type compiler struct {
	b    strings.Builder
	args []any
	now  int64
	// userFrom, when set, bounds each tag look-up's user from below.
	userFrom *string
}

// put writes SQL and appends its arguments.
func (c *compiler) put(sql string, args ...any) {
	c.b.WriteString(sql)
	c.args = append(c.args, args...)
}

func (c *compiler) node(n audience.Node) error {
	switch n.Kind {
	case audience.NodeLeaf:
		return c.leaf(n.Leaf)
	case audience.NodeNot:
		if len(n.Children) != 1 {
			return errors.New("sqlstore: a not node must have one child")
		}
		c.put("NOT ")
		return c.node(n.Children[0])
	case audience.NodeAnd, audience.NodeOr:
		if len(n.Children) == 0 {
			return errors.New("sqlstore: an and or or node without children")
		}
		join := " AND "
		if n.Kind == audience.NodeOr {
			join = " OR "
		}
		c.put("(")
		for i, child := range n.Children {
			if i > 0 {
				c.put(join)
			}
			if err := c.node(child); err != nil {
				return err
			}
		}
		c.put(")")
		return nil
	}
	return errors.New("sqlstore: a filter node without a kind")
}

func (c *compiler) leaf(l audience.Leaf) error {
	if len(l.Values) == 0 && l.Field != audience.FieldCreatedAt {
		return errors.New("sqlstore: a filter leaf without a value")
	}
	if l.Tag != "" {
		c.tag(l)
		return nil
	}
	switch l.Field {
	case audience.FieldPlatform:
		c.text("d.platform", l, false)
	case audience.FieldLocale:
		c.text("d.locale", l, true)
	case audience.FieldTimeZone:
		c.text("d.time_zone", l, false)
	case audience.FieldAppSourceVersion:
		if ordered(l.Op) {
			c.put("(d.version_key <> '' AND d.version_key "+sqlOps[l.Op]+" ?)", herald.VersionKey(l.Values[0].Str))
		} else {
			c.text("d.app_source_version", l, false)
		}
	case audience.FieldMarketing:
		c.put("d.marketing "+sqlOps[l.Op]+" ?", l.Values[0].Bool)
	case audience.FieldMarketingNight:
		c.put("d.marketing_night "+sqlOps[l.Op]+" ?", l.Values[0].Bool)
	case audience.FieldLastSeenDays:
		c.lastSeen(l.Op, int64(l.Values[0].Num))
	case audience.FieldCreatedAt:
		c.put("d.created_at "+sqlOps[l.Op]+" ?", l.At.UnixMilli())
	default:
		return errors.New("sqlstore: a filter leaf of an unknown field " + string(l.Field))
	}
	return nil
}

// sqlOps are the comparisons of the operators that have one.
var sqlOps = map[audience.Op]string{audience.OpEq: "=", audience.OpNe: "<>", audience.OpGt: ">",
	audience.OpGte: ">=", audience.OpLt: "<", audience.OpLte: "<="}

func ordered(op audience.Op) bool {
	return op == audience.OpGt || op == audience.OpGte || op == audience.OpLt || op == audience.OpLte
}

// text writes a leaf on a device's text column (” for none). bytewise
// says the column compares byte-wise on both engines (COLLATE "C" on
// PostgreSQL), so a prefix may also bound it from below for an index's
// range; on another column only the substring decides.
func (c *compiler) text(col string, l audience.Leaf, bytewise bool) {
	switch l.Op {
	case audience.OpEq, audience.OpNe:
		c.put(col+" "+sqlOps[l.Op]+" ?", l.Values[0].Str)
	case audience.OpIn:
		c.put(col + " IN (")
		for i, v := range l.Values {
			if i > 0 {
				c.put(", ")
			}
			c.put("?", v.Str)
		}
		c.put(")")
	case audience.OpPrefix:
		c.prefix(col, l.Values[0].Str, bytewise)
	case audience.OpExists:
		if l.Values[0].Bool {
			c.put(col + " <> ''")
		} else {
			c.put(col + " = ''")
		}
	}
}

// prefix writes "col starts with p". On a column that compares byte-wise
// it is the closed range p <= col < prefixBound(p), which an index reads
// as one range and which is exact for UTF-8 text (prefixBound); with no
// bound (p empty, or only U+10FFFF) every string at or after p has it. On
// another column (the database's collation on PostgreSQL) only substr
// decides, which counts characters on both engines.
func (c *compiler) prefix(col, p string, bytewise bool) {
	sub := "substr(" + col + ", 1, " + strconv.Itoa(utf8.RuneCountInString(p)) + ") = ?"
	switch {
	case !bytewise:
		c.put(sub, p)
		return
	case !utf8.ValidString(p): // not from JSON, which is UTF-8: the substring decides
		c.put("("+col+" >= ? AND "+sub+")", p, p)
		return
	}
	if upper, ok := prefixBound(p); ok {
		c.put("("+col+" >= ? AND "+col+" < ?)", p, upper)
	} else {
		c.put(col+" >= ?", p)
	}
}

// prefixBound is the least valid UTF-8 string after every string that
// starts with p (valid UTF-8), false when there is none (p is empty or all U+10FFFF):
// p with its last character that is not U+10FFFF replaced by the next
// code point (skipping the surrogates) and what follows it dropped. A
// string s of valid UTF-8 starts with p exactly when p <= s < bound in
// byte order: UTF-8 orders code points as their numbers, so s between
// them shares the part of p before that character, then has a character
// at least it and less than the next, which is it; and after it s is at
// least the rest of p, all U+10FFFF, which only the same characters are.
// Incrementing the last byte, the bound for bytes, could make invalid
// UTF-8 ("\x7f" to "\x80"), which PostgreSQL's text refuses.
func prefixBound(p string) (string, bool) {
	for p != "" {
		r, size := utf8.DecodeLastRuneInString(p)
		p = p[:len(p)-size]
		switch {
		case r == utf8.MaxRune:
			continue
		case r == 0xD7FF:
			return p + "\uE000", true
		}
		return p + string(r+1), true
	}
	return "", false
}

// lastSeen writes a comparison of the days since the device was last seen,
// floor((now - last_seen_at) / day), as a range of last_seen_at: days >=
// k exactly when last_seen_at <= now - k days, whatever the sign.
func (c *compiler) lastSeen(op audience.Op, k int64) {
	atLeast := func(k int64) int64 { return c.now - k*dayMS } // days >= k: last_seen_at <= this
	switch op {
	case audience.OpGte:
		c.put("d.last_seen_at <= ?", atLeast(k))
	case audience.OpGt:
		c.put("d.last_seen_at <= ?", atLeast(k+1))
	case audience.OpLt:
		c.put("d.last_seen_at > ?", atLeast(k))
	case audience.OpLte:
		c.put("d.last_seen_at > ?", atLeast(k+1))
	case audience.OpEq:
		c.put("(d.last_seen_at > ? AND d.last_seen_at <= ?)", atLeast(k+1), atLeast(k))
	case audience.OpNe:
		c.put("(d.last_seen_at <= ? OR d.last_seen_at > ?)", atLeast(k+1), atLeast(k))
	}
}

// tagSQL opens a tag leaf's look-up of the user's tag by the primary key.
const tagSQL = "EXISTS (SELECT 1 FROM user_tags t WHERE t.app_id = d.app_id AND t.user_id = d.user_id AND t.name = ?"

// tagEnd closes a tag look-up. Its OFFSET keeps PostgreSQL from turning
// the EXISTS into a join, so each device's pair is one probe of the key,
// as on SQLite, whatever the statistics say: with them taken before an
// import of tags, the joins it planned read every tag of a leaf's name
// for each device (77 s for a page of 2,000 of 20,000). A filter then
// costs at most a probe a leaf for each of the app's devices.
const tagEnd = " LIMIT 1 OFFSET 0)"

// tagOpen writes tagSQL for the tag, with the user's bound if any.
func (c *compiler) tagOpen(name string) {
	c.put(tagSQL, name)
	if c.userFrom != nil {
		c.put(" AND t.user_id >= ?", *c.userFrom)
	}
}

// tag writes a tag leaf: an EXISTS of the tag with the leaf's condition,
// or the NOT EXISTS of ne and exists false, which a missing tag holds.
func (c *compiler) tag(l audience.Leaf) {
	switch l.Op {
	case audience.OpExists:
		if !l.Values[0].Bool {
			c.put("NOT ")
		}
		c.tagOpen(l.Tag)
	case audience.OpEq, audience.OpNe:
		if l.Op == audience.OpNe {
			c.put("NOT ")
		}
		c.tagOpen(l.Tag)
		c.put(" AND ")
		c.tagEqual(l.Values[0])
	case audience.OpIn:
		c.tagOpen(l.Tag)
		c.put(" AND (")
		for i, v := range l.Values {
			if i > 0 {
				c.put(" OR ")
			}
			c.tagEqual(v)
		}
		c.put(")")
	case audience.OpPrefix:
		// The substring, not a range of text_value, which SQLite's planner
		// (3.53, without statistics) judged cheaper to read from the value
		// index than the user's key: every tag of the name for each device.
		c.tagOpen(l.Tag)
		c.put(" AND t.kind = 's' AND ")
		c.prefix("t.text_value", l.Values[0].Str, false)
	default: // gt, gte, lt, lte on a number or a string
		c.tagOpen(l.Tag)
		if v := l.Values[0]; v.Kind == audience.KindNumber {
			c.put(" AND t.kind = 'n' AND t.num_value "+sqlOps[l.Op]+" ?", v.Num)
		} else {
			c.put(" AND t.kind = 's' AND t.text_value "+sqlOps[l.Op]+" ?", v.Str)
		}
	}
	c.put(tagEnd)
}

// tagEqual writes "the tag is v" (tagValueSQL).
func (c *compiler) tagEqual(v audience.Value) {
	col, arg := tagValueSQL(v)
	c.put("("+col+" = ?)", arg)
}

// tagValueSQL is the column a value of v's kind is compared in, with the
// kind where the column does not tell it, and v as its argument: a number
// by num_value alone (set for kind 'n' only; so -0 is 0, as in Go), the
// others by kind and text_value. Its shape is the value indexes'.
func tagValueSQL(v audience.Value) (col string, arg any) {
	switch v.Kind {
	case audience.KindNumber:
		return "t.num_value", v.Num
	case audience.KindBool:
		return "t.kind = 'b' AND t.text_value", v.Text()
	}
	return "t.kind = 's' AND t.text_value", v.Str
}

// oneKind reports whether the values are all of one kind.
func oneKind(vs []audience.Value) bool {
	for _, v := range vs {
		if v.Kind != vs[0].Kind {
			return false
		}
	}
	return true
}

// tagDrivenSQL compiles a filter whose root is, or is an and of, a tag
// leaf of eq, or of in with values of one kind, for a count that reads
// that tag's rows from user_tags by its value (user_tags_text and
// user_tags_num, which index the name as name || ” so that only such a
// query uses them) and joins each to its user's devices, instead of
// reading every device of the app: the
// leaf's condition on `user_tags t`, and the rest of the filter on
// `devices d` ("1 = 1" for none; its tag look-ups bounded by userFrom as
// filterFromSQL's).
// False when the filter has no such leaf. The leaf holds only for mapped
// devices, and a user has a tag once, so the join has each device once.
// Not a prefix: at 1,000,000 users on SQLite a prefix of 22 % of them
// counted this way took 2.2 s, no better than the devices' scan (1.8 s).
func tagDrivenSQL(f audience.Filter, now time.Time, userFrom *string) (tagDrive, bool, error) {
	root := f.Root
	leaves := []audience.Node{root}
	if root.Kind == audience.NodeAnd {
		leaves = root.Children
	}
	drive := -1
	for i, n := range leaves {
		if n.Kind == audience.NodeLeaf && n.Leaf.Tag != "" && len(n.Leaf.Values) > 0 &&
			(n.Leaf.Op == audience.OpEq || n.Leaf.Op == audience.OpIn && oneKind(n.Leaf.Values)) {
			drive = i
			break
		}
	}
	if drive < 0 {
		return tagDrive{}, false, nil
	}
	c := compiler{now: now.UnixMilli(), userFrom: userFrom}
	l := leaves[drive].Leaf
	c.put("(t.name || '') = ? AND ", l.Tag) // the expression user_tags_text and user_tags_num index
	col, _ := tagValueSQL(l.Values[0])      // the values are of one kind
	c.put(col + " IN (")
	for i, v := range l.Values { // eq: one value
		if i > 0 {
			c.put(", ")
		}
		_, arg := tagValueSQL(v)
		c.put("?", arg)
	}
	c.put(")")
	td := tagDrive{tag: c.b.String(), tagArgs: c.args, single: len(l.Values) == 1}
	c.b.Reset()
	c.args = nil
	n := 0
	for i, child := range leaves {
		if i == drive {
			continue
		}
		if n > 0 {
			c.put(" AND ")
		}
		n++
		if err := c.node(child); err != nil {
			return tagDrive{}, false, err
		}
	}
	if n == 0 {
		c.put("1 = 1")
	}
	td.rest, td.restArgs = c.b.String(), c.args
	return td, true, nil
}

// tagDrive is a filter compiled by tagDrivenSQL: the driving leaf's
// condition on `user_tags t` and the rest's on `devices d`, each with its
// arguments; single when the leaf has one value, so that its index reads
// the tag's users in order of ID.
type tagDrive struct {
	tag, rest         string
	tagArgs, restArgs []any
	single            bool
}
