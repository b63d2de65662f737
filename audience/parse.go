package audience

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// rootPath is the path of a filter's root in a detail.
const rootPath = "filter"

// Parse reads a filter's JSON tree. Each problem gives a detail naming the
// path of the bad node from "filter" (filter.and[1].or[0].eq names the
// value of an operator, filter.and[1].tag a leaf's tag), and Parse returns
// the details of every node it could read.
func Parse(raw json.RawMessage) (Filter, []herald.Detail) {
	if !utf8.Valid(raw) {
		return Filter{}, []herald.Detail{{Field: rootPath, Reason: herald.ReasonInvalidUTF8}}
	}
	p := parser{}
	root := p.node(raw, rootPath, 1)
	if p.leaves > MaxLeaves {
		p.fail(rootPath, "must have at most "+strconv.Itoa(MaxLeaves)+" leaves, has "+strconv.Itoa(p.leaves))
	}
	if p.details != nil {
		return Filter{}, p.details
	}
	return Filter{Root: root}, nil
}

// parser gathers what Parse finds while it walks the tree.
type parser struct {
	leaves  int
	details []herald.Detail
}

func (p *parser) fail(path, reason string) {
	p.details = append(p.details, herald.Detail{Field: path, Reason: reason})
}

// reasonNode is why a node that is neither a leaf nor an inner node is
// refused.
const reasonNode = `must be an object: {"and": [...]}, {"or": [...]}, {"not": {...}}, {"tag": NAME, OP: VALUE} or {"field": FIELD, OP: VALUE}`

// node reads the node at path, depth deep (the root is 1).
func (p *parser) node(raw json.RawMessage, path string, depth int) Node {
	members, order, dups, ok := object(raw)
	if !ok {
		p.fail(path, reasonNode)
		return Node{}
	}
	for _, name := range dups {
		p.fail(path+"."+name, "is given more than once")
	}
	for _, inner := range []string{"and", "or", "not"} {
		if _, ok := members[inner]; !ok {
			continue
		}
		for _, name := range order {
			if name != inner {
				p.fail(path+"."+name, "is not allowed beside "+inner)
			}
		}
		if depth >= MaxDepth {
			p.fail(path, "must not nest deeper than "+strconv.Itoa(MaxDepth)+" levels, counting the leaf")
			return Node{}
		}
		return p.inner(inner, members[inner], path+"."+inner, depth)
	}
	return Node{Kind: NodeLeaf, Leaf: p.leaf(members, order, path)}
}

// inner reads the operand of an and, or or not at path.
func (p *parser) inner(kind string, raw json.RawMessage, path string, depth int) Node {
	if kind == "not" {
		return Node{Kind: NodeNot, Children: []Node{p.node(raw, path, depth+1)}}
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		p.fail(path, "must be a non-empty array of nodes")
		return Node{}
	}
	n := Node{Kind: NodeAnd}
	if kind == "or" {
		n.Kind = NodeOr
	}
	for i, c := range list {
		n.Children = append(n.Children, p.node(c, path+"["+strconv.Itoa(i)+"]", depth+1))
	}
	return n
}

// leaf reads a leaf at path: its tag or field, and its one operator.
func (p *parser) leaf(members map[string]json.RawMessage, order []string, path string) Leaf {
	p.leaves++
	var l Leaf
	var op []Op
	for _, name := range order {
		switch {
		case name == "tag" || name == "field":
		case isOp(name):
			op = append(op, Op(name))
		default:
			p.fail(path+"."+name, "is not a member of a leaf (tag or field, and one of "+opList()+")")
		}
	}
	tag, hasTag := members["tag"]
	field, hasField := members["field"]
	switch {
	case hasTag && hasField:
		p.fail(path, "must have a tag or a field, not both")
		return l
	case hasTag:
		if json.Unmarshal(tag, &l.Tag) != nil || !ValidTagName(l.Tag) {
			p.fail(path+".tag", ReasonTagName)
			return l
		}
	case hasField:
		var name string
		if json.Unmarshal(field, &name) != nil || !knownField(Field(name)) {
			p.fail(path+".field", "must be one of "+fieldList())
			return l
		}
		l.Field = Field(name)
	default:
		p.fail(path, "must have a tag or a field")
		return l
	}
	if len(op) != 1 {
		p.fail(path, "must have exactly one operator of "+opList()+", has "+strconv.Itoa(len(op)))
		return l
	}
	l.Op = op[0]
	opPath := path + "." + string(l.Op)
	var bad problem
	if l.Tag != "" {
		bad = tagOperand(&l, members[string(l.Op)])
	} else {
		bad = fieldOperand(&l, members[string(l.Op)])
	}
	if bad.reason != "" {
		p.fail(opPath+bad.at, bad.reason)
	}
	return l
}

// problem is why an operand was refused (none when reason is ""), at
// what within it: "" for the operand, "[i]" for an item of in's list.
type problem struct{ at, reason string }

// refuse is the problem of an operand as a whole.
func refuse(reason string) problem { return problem{reason: reason} }

// tagOperand reads the operand of a tag leaf; a reason when it is refused.
func tagOperand(l *Leaf, raw json.RawMessage) problem {
	switch l.Op {
	case OpEq, OpNe:
		return one(l, raw, nil)
	case OpIn:
		return list(l, raw, nil)
	case OpExists:
		return one(l, raw, kindIs(KindBool, "must be a boolean"))
	case OpGt, OpGte, OpLt, OpLte:
		return one(l, raw, func(v Value) string {
			if v.Kind == KindBool {
				return "must be a number or a string"
			}
			return ""
		})
	case OpPrefix:
		return one(l, raw, kindIs(KindString, "must be a string"))
	}
	return refuse("is not an operator")
}

// fieldOperand reads the operand of a field leaf (see Field); a reason when
// it is refused.
func fieldOperand(l *Leaf, raw json.RawMessage) problem {
	nonEmpty := func(v Value) string {
		if v.Kind != KindString || v.Str == "" {
			return "must be a non-empty string"
		}
		return ""
	}
	switch f, op := l.Field, l.Op; {
	case f == FieldPlatform && (op == OpEq || op == OpNe || op == OpIn):
		return operand(l, raw, func(v Value) string {
			if v.Kind != KindString || !herald.Platform(v.Str).Valid() {
				return `must be "android", "ios" or "web"`
			}
			return ""
		})
	case (f == FieldLocale || f == FieldTimeZone || f == FieldAppSourceVersion) && (op == OpEq || op == OpNe || op == OpIn || op == OpPrefix):
		return operand(l, raw, nonEmpty)
	case (f == FieldLocale || f == FieldTimeZone) && op == OpExists,
		(f == FieldMarketing || f == FieldMarketingNight) && (op == OpEq || op == OpNe):
		return one(l, raw, kindIs(KindBool, "must be a boolean"))
	case f == FieldAppSourceVersion && ordered(op):
		return one(l, raw, func(v Value) string {
			if v.Kind != KindString || herald.VersionKey(v.Str) == "" {
				return "must be a version x.y.z"
			}
			return ""
		})
	case f == FieldLastSeenDays && (op == OpEq || op == OpNe || ordered(op)):
		return one(l, raw, func(v Value) string {
			if v.Kind != KindNumber || v.Num < 0 || v.Num > MaxDays || v.Num != math.Trunc(v.Num) {
				return "must be a whole number of days from 0 to " + strconv.Itoa(MaxDays)
			}
			return ""
		})
	case f == FieldCreatedAt && (op == OpEq || op == OpNe || ordered(op)):
		var s string
		at, ok := time.Time{}, json.Unmarshal(raw, &s) == nil
		if ok {
			at, ok = parseDate(s)
		}
		if !ok {
			return refuse("must be a date: RFC 3339 or YYYY-MM-DD")
		}
		l.At = at
		return problem{}
	}
	return refuse("is not an operator of the field " + string(l.Field))
}

// operand reads one value, or in's list, each checked by check.
func operand(l *Leaf, raw json.RawMessage, check func(Value) string) problem {
	if l.Op == OpIn {
		return list(l, raw, check)
	}
	return one(l, raw, check)
}

// one reads a single value checked by check (nil: any value).
func one(l *Leaf, raw json.RawMessage, check func(Value) string) problem {
	v, reason := parseValue(raw)
	if reason == "" && check != nil {
		reason = check(v)
	}
	if reason == "" {
		l.Values = []Value{v}
	}
	return refuse(reason)
}

// list reads in's values, 1 to MaxIn, each checked by check (nil: any).
func list(l *Leaf, raw json.RawMessage, check func(Value) string) problem {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 || len(items) > MaxIn {
		return refuse("must be an array of 1 to " + strconv.Itoa(MaxIn) + " values")
	}
	for i, item := range items {
		v, reason := parseValue(item)
		if reason == "" && check != nil {
			reason = check(v)
		}
		if reason != "" {
			l.Values = nil
			return problem{at: "[" + strconv.Itoa(i) + "]", reason: reason}
		}
		l.Values = append(l.Values, v)
	}
	return problem{}
}

// kindIs checks that a value is of kind k.
func kindIs(k Kind, reason string) func(Value) string {
	return func(v Value) string {
		if v.Kind != k {
			return reason
		}
		return ""
	}
}

func ordered(op Op) bool { return op == OpGt || op == OpGte || op == OpLt || op == OpLte }

// parseDate reads RFC 3339, or YYYY-MM-DD as that day's 00:00 UTC, to the
// millisecond (the precision of a device's creation).
func parseDate(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return time.Time{}, false
		}
	}
	return t.UTC().Truncate(time.Millisecond), true
}

func isOp(name string) bool {
	for _, op := range ops {
		if string(op) == name {
			return true
		}
	}
	return false
}

func opList() string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

// fields are the fields a leaf may read, in the order a detail lists them.
var fields = []Field{FieldPlatform, FieldLocale, FieldTimeZone, FieldAppSourceVersion, FieldMarketing,
	FieldMarketingNight, FieldLastSeenDays, FieldCreatedAt}

func knownField(f Field) bool {
	for _, k := range fields {
		if k == f {
			return true
		}
	}
	return false
}

func fieldList() string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// object reads a JSON object's members, their names in the order written
// and the names written more than once; ok is false for anything else.
func object(raw json.RawMessage) (members map[string]json.RawMessage, order, dups []string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, nil, false
	}
	members = map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, nil, false
		}
		if _, dup := members[name]; dup {
			dups = append(dups, name)
		} else {
			order = append(order, name)
		}
		members[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, nil, false // something after the object
	}
	return members, order, dups, true
}
