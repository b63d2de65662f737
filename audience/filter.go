package audience

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// The limits of a filter (DESIGN 13).
const (
	// MaxLeaves is how many leaves a filter may have.
	MaxLeaves = 50
	// MaxDepth is how deep a filter may nest, counting the leaf: a lone
	// leaf is 1 deep.
	MaxDepth = 6
	// MaxIn is how many values an in operator may list.
	MaxIn = 100
	// MaxDays is the largest number of days lastSeenDays compares with.
	MaxDays = 100_000
)

// Filter is a parsed filter: a tree of and, or and not over leaves, each
// judged on a (user, device) pair (Subject). Make one with Parse; the
// zero Filter matches nothing.
type Filter struct {
	Root Node
}

// NodeKind is what a Node is.
type NodeKind uint8

// The kinds of a Node.
const (
	NodeLeaf NodeKind = iota + 1
	NodeAnd
	NodeOr
	NodeNot
)

// Node is one node of a filter: a Leaf, or an and or or of its Children
// (at least one), or the not of its one child.
type Node struct {
	Kind     NodeKind
	Children []Node
	Leaf     Leaf
}

// Op is a leaf's comparison.
type Op string

// The operators of a leaf; which a leaf may use depends on its tag or
// field (see Field).
const (
	OpEq     Op = "eq"
	OpNe     Op = "ne"
	OpIn     Op = "in"
	OpExists Op = "exists"
	OpGt     Op = "gt"
	OpGte    Op = "gte"
	OpLt     Op = "lt"
	OpLte    Op = "lte"
	OpPrefix Op = "prefix"
)

// ops are the operators in the order a detail lists them.
var ops = []Op{OpEq, OpNe, OpIn, OpExists, OpGt, OpGte, OpLt, OpLte, OpPrefix}

// Field is a device's property a leaf reads. Each takes these operators
// and values:
//
//	platform          eq ne in                 "android", "ios" or "web"
//	locale, timeZone  eq ne in prefix          non-empty strings
//	                  exists                   a boolean: the device reported one
//	appSourceVersion  eq ne in prefix          non-empty strings, on the version as sent
//	                  gt gte lt lte            an x.y.z version, compared as versions
//	                                           (herald.VersionKey); a device whose
//	                                           version cannot be read matches none
//	marketing,        eq ne                    a boolean: the device's consent
//	marketingNight
//	lastSeenDays      eq ne gt gte lt lte      a whole number of days, 0 to MaxDays:
//	                                           floor((now − last seen) / 24 h)
//	createdAt         eq ne gt gte lt lte      a date: RFC 3339, or YYYY-MM-DD for
//	                                           that day's 00:00 UTC; to the millisecond
//
// A tag leaf takes eq, ne and in with strings, numbers and booleans
// (typed: "5" is not 5), exists with a boolean, gt, gte, lt and lte with a
// number (true of number tags only) or a string (string tags only,
// compared byte-wise, so ISO dates order), and prefix with a string
// (string tags only).
type Field string

// The fields of a device a leaf may read.
const (
	FieldPlatform         Field = "platform"
	FieldLocale           Field = "locale"
	FieldTimeZone         Field = "timeZone"
	FieldAppSourceVersion Field = "appSourceVersion"
	FieldMarketing        Field = "marketing"
	FieldMarketingNight   Field = "marketingNight"
	FieldLastSeenDays     Field = "lastSeenDays"
	FieldCreatedAt        Field = "createdAt"
)

// Leaf is one comparison: of the user's tag named Tag, or else of the
// device's Field, by Op with Values (one, or the list of in). A
// createdAt leaf's value is At instead, to the millisecond in UTC.
type Leaf struct {
	Tag    string
	Field  Field
	Op     Op
	Values []Value
	At     time.Time
}

// Leaves returns how many leaves the filter has.
func (f Filter) Leaves() int { return f.Root.leaves() }

func (n Node) leaves() int {
	if n.Kind == NodeLeaf {
		return 1
	}
	total := 0
	for _, c := range n.Children {
		total += c.leaves()
	}
	return total
}

// MarshalJSON writes the filter's canonical JSON, which Parse reads back
// to the same filter.
func (f Filter) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := f.Root.write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalJSON parses a filter (Parse), as kept by a store; the error
// names the first problem.
func (f *Filter) UnmarshalJSON(raw []byte) error {
	got, details := Parse(raw)
	if details != nil {
		return errors.New("audience: " + details[0].Field + ": " + details[0].Reason)
	}
	*f = got
	return nil
}

func (n Node) write(b *bytes.Buffer) error {
	switch n.Kind {
	case NodeAnd, NodeOr:
		if n.Kind == NodeAnd {
			b.WriteString(`{"and":[`)
		} else {
			b.WriteString(`{"or":[`)
		}
		for i, c := range n.Children {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := c.write(b); err != nil {
				return err
			}
		}
		b.WriteString("]}")
	case NodeNot:
		if len(n.Children) != 1 {
			return errors.New("audience: a not node must have one child")
		}
		b.WriteString(`{"not":`)
		if err := n.Children[0].write(b); err != nil {
			return err
		}
		b.WriteByte('}')
	case NodeLeaf:
		return n.Leaf.write(b)
	default:
		return errors.New("audience: a node without a kind")
	}
	return nil
}

func (l Leaf) write(b *bytes.Buffer) error {
	var subject []byte
	if l.Tag != "" {
		b.WriteString(`{"tag":`)
		subject, _ = json.Marshal(l.Tag)
	} else {
		b.WriteString(`{"field":`)
		subject, _ = json.Marshal(string(l.Field))
	}
	b.Write(subject)
	b.WriteString(`,` + strconv.Quote(string(l.Op)) + `:`)
	var value []byte
	var err error
	switch {
	case l.Field == FieldCreatedAt:
		value, err = json.Marshal(l.At.UTC().Format(time.RFC3339Nano))
	case l.Op == OpIn:
		value, err = json.Marshal(l.Values)
	case len(l.Values) == 1:
		value, err = json.Marshal(l.Values[0])
	default:
		err = errors.New("audience: a leaf must have one value")
	}
	if err != nil {
		return err
	}
	b.Write(value)
	b.WriteByte('}')
	return nil
}
