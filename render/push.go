package render

import (
	"fmt"

	"github.com/heraldpush/herald"
)

// Message is a push's title and content compiled for sending: its default
// and each localized entry, as variants. Variant 0 is the default; variant
// i (1 ≤ i ≤ Variants()-1) is the entry of the i-th key in byte order
// (Lang), an order that depends only on the keys, so a variant stored per
// delivery by the planner names the same entry at send time. A Message is
// read-only once built and safe for concurrent use.
type Message struct {
	titles, bodies []Template
	langs          []string // langs[i] is variant i's key; "" for 0
	index          index
	tags           []string
	static         bool
}

// NewMessage compiles the default title and content of def and the
// entries of l. The texts were checked at accept; an error here names the
// member that no longer compiles (a push stored before a rule changed).
func NewMessage(def herald.Content, l Localized) (*Message, error) {
	x := newIndex(l)
	m := &Message{
		titles: make([]Template, 0, 1+len(x.keys)),
		bodies: make([]Template, 0, 1+len(x.keys)),
		langs:  append([]string{""}, x.keys...),
		index:  x,
		static: true,
	}
	if err := m.add("", def.Title, def.Content); err != nil {
		return nil, err
	}
	for _, k := range x.keys {
		if err := m.add("localized."+k+".", l[k].Title, l[k].Content); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// add compiles one variant, its members named under prefix.
func (m *Message) add(prefix, title, body string) error {
	t, err := Compile(title)
	if err != nil {
		return fmt.Errorf("%stitle: %w", prefix, err)
	}
	b, err := Compile(body)
	if err != nil {
		return fmt.Errorf("%scontent: %w", prefix, err)
	}
	m.titles, m.bodies = append(m.titles, t), append(m.bodies, b)
	m.static = m.static && t.Static() && b.Static()
	for _, tags := range [][]string{t.tags, b.tags} {
		for _, name := range tags {
			if !containsString(m.tags, name) {
				m.tags = append(m.tags, name)
			}
		}
	}
	return nil
}

// Variants returns how many variants the message has: 1 plus its entries.
func (m *Message) Variants() int { return len(m.titles) }

// Lang returns the key of variant v as the request gave it, "" for the
// default (and for a v out of range).
func (m *Message) Lang(v int) string {
	if v < 0 || v >= len(m.langs) {
		return ""
	}
	return m.langs[v]
}

// Choose returns the variant a device of locale gets, in the order Pick
// documents: 0 (the default) when no entry matches or locale is empty. It
// does not allocate.
func (m *Message) Choose(locale string) int {
	return m.index.choose(locale) + 1
}

// Render returns variant v's title and content for one user (see
// Template.Render); a v out of range renders the default, so that a stale
// index cannot fail a send. A static variant returns its texts without
// allocating.
func (m *Message) Render(v int, userID string, tag func(name string) (string, bool)) (title, body string) {
	if v < 0 || v >= len(m.titles) {
		v = 0
	}
	return m.titles[v].Render(userID, tag), m.bodies[v].Render(userID, tag)
}

// Static reports whether no variant holds a placeholder: the sender then
// needs neither the user's tags nor a render per user.
func (m *Message) Static() bool { return m.static }

// Tags returns the names of the tags any variant reads, once each, so the
// sender loads only those. The slice is the caller's.
func (m *Message) Tags() []string {
	if len(m.tags) == 0 {
		return nil
	}
	return append([]string(nil), m.tags...)
}
