package audience

import (
	"cmp"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// Subject is the (user, device) pair a filter is judged on: the user's
// tags (nil for a device no user is mapped to, which has none) and the
// device's fields.
type Subject struct {
	Tags             Tags
	Platform         herald.Platform
	Locale           string
	TimeZone         string
	AppSourceVersion string
	Marketing        bool
	MarketingNight   bool
	CreatedAt        time.Time
	LastSeenAt       time.Time
}

// Count is the size of a filter's audience: the devices it matches, and
// the users they make, where each matching device no user is mapped to
// counts as one, as an all-users push counts them.
type Count struct {
	Users, Devices int
}

// dayMS is a day in milliseconds, the unit of lastSeenDays.
const dayMS = 24 * 60 * 60 * 1000

// Match reports whether the pair s holds for the filter at now (the clock
// lastSeenDays counts from). This is the filter's meaning (DESIGN 13); a
// store's query must select exactly the pairs it matches.
func (f Filter) Match(s Subject, now time.Time) bool { return f.Root.match(s, now) }

func (n Node) match(s Subject, now time.Time) bool {
	switch n.Kind {
	case NodeLeaf:
		return n.Leaf.match(s, now)
	case NodeAnd:
		for _, c := range n.Children {
			if !c.match(s, now) {
				return false
			}
		}
		return true
	case NodeOr:
		for _, c := range n.Children {
			if c.match(s, now) {
				return true
			}
		}
		return false
	case NodeNot:
		return len(n.Children) == 1 && !n.Children[0].match(s, now)
	}
	return false
}

func (l Leaf) match(s Subject, now time.Time) bool {
	if l.Tag != "" {
		v, ok := s.Tags[l.Tag]
		return l.matchTag(v, ok)
	}
	switch l.Field {
	case FieldPlatform:
		return l.matchString(string(s.Platform))
	case FieldLocale:
		return l.matchString(s.Locale)
	case FieldTimeZone:
		return l.matchString(s.TimeZone)
	case FieldAppSourceVersion:
		if ordered(l.Op) {
			have := herald.VersionKey(s.AppSourceVersion)
			return have != "" && compare(l.Op, strings.Compare(have, herald.VersionKey(l.Values[0].Str)))
		}
		return l.matchString(s.AppSourceVersion)
	case FieldMarketing:
		return (s.Marketing == l.Values[0].Bool) == (l.Op == OpEq)
	case FieldMarketingNight:
		return (s.MarketingNight == l.Values[0].Bool) == (l.Op == OpEq)
	case FieldLastSeenDays:
		days := floorDiv(now.UnixMilli()-s.LastSeenAt.UnixMilli(), dayMS)
		return l.matchOrder(cmp.Compare(days, int64(l.Values[0].Num)))
	case FieldCreatedAt:
		return l.matchOrder(cmp.Compare(s.CreatedAt.UnixMilli(), l.At.UnixMilli()))
	}
	return false
}

// matchTag judges a tag leaf on the user's tag (present: ok). A missing
// tag holds for ne and exists false only.
func (l Leaf) matchTag(v Value, ok bool) bool {
	switch l.Op {
	case OpExists:
		return ok == l.Values[0].Bool
	case OpNe:
		return !ok || !v.Equal(l.Values[0])
	}
	if !ok {
		return false
	}
	switch x := l.Values[0]; l.Op {
	case OpEq:
		return v.Equal(x)
	case OpIn:
		for _, x := range l.Values {
			if v.Equal(x) {
				return true
			}
		}
	case OpPrefix:
		return v.Kind == KindString && strings.HasPrefix(v.Str, x.Str)
	case OpGt, OpGte, OpLt, OpLte:
		switch {
		case v.Kind != x.Kind:
		case v.Kind == KindString:
			return compare(l.Op, strings.Compare(v.Str, x.Str))
		case v.Kind == KindNumber:
			return compare(l.Op, cmp.Compare(v.Num, x.Num))
		}
	}
	return false
}

// matchString judges a leaf of a string field on the device's value ("" for
// none).
func (l Leaf) matchString(have string) bool {
	switch l.Op {
	case OpEq:
		return have == l.Values[0].Str
	case OpNe:
		return have != l.Values[0].Str
	case OpIn:
		for _, x := range l.Values {
			if have == x.Str {
				return true
			}
		}
	case OpPrefix:
		return strings.HasPrefix(have, l.Values[0].Str)
	case OpExists:
		return (have != "") == l.Values[0].Bool
	}
	return false
}

// matchOrder judges eq, ne, gt, gte, lt and lte on the comparison c of the
// device's value with the leaf's.
func (l Leaf) matchOrder(c int) bool {
	switch l.Op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	}
	return compare(l.Op, c)
}

// compare reports whether an ordered op holds of a comparison c (-1, 0, 1).
func compare(op Op, c int) bool {
	switch op {
	case OpGt:
		return c > 0
	case OpGte:
		return c >= 0
	case OpLt:
		return c < 0
	case OpLte:
		return c <= 0
	}
	return false
}

// floorDiv is a / b rounded down, for b > 0: a device seen in the future
// (a skewed clock) is -1 days old, not 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
