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
	c := compiler{now: now.UnixMilli()}
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

// prefix writes "col starts with p": substr counts characters on both
// engines, and every string that starts with p sorts at or after it.
func (c *compiler) prefix(col, p string, bytewise bool) {
	sub := "substr(" + col + ", 1, " + strconv.Itoa(utf8.RuneCountInString(p)) + ") = ?"
	if bytewise {
		c.put("("+col+" >= ? AND "+sub+")", p, p)
	} else {
		c.put(sub, p)
	}
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

// tag writes a tag leaf: an EXISTS of the tag with the leaf's condition,
// or the NOT EXISTS of ne and exists false, which a missing tag holds.
func (c *compiler) tag(l audience.Leaf) {
	switch l.Op {
	case audience.OpExists:
		if !l.Values[0].Bool {
			c.put("NOT ")
		}
		c.put(tagSQL+")", l.Tag)
	case audience.OpEq, audience.OpNe:
		if l.Op == audience.OpNe {
			c.put("NOT ")
		}
		c.put(tagSQL+" AND ", l.Tag)
		c.tagEqual(l.Values[0])
		c.put(")")
	case audience.OpIn:
		c.put(tagSQL+" AND (", l.Tag)
		for i, v := range l.Values {
			if i > 0 {
				c.put(" OR ")
			}
			c.tagEqual(v)
		}
		c.put("))")
	case audience.OpPrefix:
		c.put(tagSQL+" AND t.kind = 's' AND ", l.Tag)
		c.prefix("t.text_value", l.Values[0].Str, true)
		c.put(")")
	default: // gt, gte, lt, lte on a number or a string
		c.put(tagSQL, l.Tag)
		if v := l.Values[0]; v.Kind == audience.KindNumber {
			c.put(" AND t.kind = 'n' AND t.num_value "+sqlOps[l.Op]+" ?)", v.Num)
		} else {
			c.put(" AND t.kind = 's' AND t.text_value "+sqlOps[l.Op]+" ?)", v.Str)
		}
	}
}

// tagEqual writes "the tag is v", of v's kind: numbers by num_value (so
// -0 is 0, as in Go), the others by text_value.
func (c *compiler) tagEqual(v audience.Value) {
	switch v.Kind {
	case audience.KindNumber:
		c.put("(t.kind = 'n' AND t.num_value = ?)", v.Num)
	case audience.KindBool:
		c.put("(t.kind = 'b' AND t.text_value = ?)", v.Text())
	default:
		c.put("(t.kind = 's' AND t.text_value = ?)", v.Str)
	}
}
