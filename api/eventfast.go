package api

import (
	"bytes"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// readEventsFast reads an events report of the shape apps send, without
// the general parser (request.ParseLenient), which splits every object of
// the body into maps: {"deviceId": …, "events": [{"pushId": …, "type": …,
// "at": …}, …]}, members in any order, each once, "at" optional or null,
// every string printable ASCII without escapes, every value valid. It
// returns what reportEvents reads from such a body; ok is false for any
// other body (another member, an escape, a problem to name), which the
// general parser then reads and judges.
func readEventsFast(body []byte, now time.Time) (deviceID string, events []herald.Event, ok bool) {
	p := fastParser{b: body}
	var sawDevice, sawEvents bool
	ok = p.object(func(key string) bool {
		switch {
		case key == "deviceId" && !sawDevice:
			sawDevice = true
			var ok bool
			deviceID, ok = p.str()
			return ok && validID(deviceID)
		case key == "events" && !sawEvents:
			sawEvents = true
			events = make([]herald.Event, 0, 2)
			return p.array(func() bool {
				e, ok := p.event(now)
				events = append(events, e)
				return ok && len(events) <= herald.MaxEvents
			})
		}
		return false
	})
	if !ok || !sawDevice || len(events) == 0 || p.skipSpace() != len(body) {
		return "", nil, false
	}
	return deviceID, events, true
}

// validID reports whether an id read by the fast path is one Str(name,
// true, 255) takes: not blank, at most 255 characters (ASCII here).
func validID(s string) bool {
	return len(s) <= 255 && strings.TrimSpace(s) != ""
}

// fastParser reads the fast path's JSON subset from b at i.
type fastParser struct {
	b []byte
	i int
}

// skipSpace skips JSON whitespace and returns the position.
func (p *fastParser) skipSpace() int {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
	return p.i
}

// take skips whitespace and then c, reporting whether c was there.
func (p *fastParser) take(c byte) bool {
	if p.skipSpace() < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (p *fastParser) str() (string, bool) {
	if !p.take('"') {
		return "", false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

// object reads an object, calling member for each member's value after
// its name and colon; member reads the value and reports whether it was
// one the fast path takes.
func (p *fastParser) object(member func(key string) bool) bool {
	if !p.take('{') {
		return false
	}
	if p.take('}') {
		return true
	}
	for {
		key, ok := p.str()
		if !ok || !p.take(':') || !member(key) {
			return false
		}
		if p.take('}') {
			return true
		}
		if !p.take(',') {
			return false
		}
	}
}

// array reads a non-empty array, calling element for each element.
func (p *fastParser) array(element func() bool) bool {
	if !p.take('[') {
		return false
	}
	for {
		if !element() {
			return false
		}
		if p.take(']') {
			return true
		}
		if !p.take(',') {
			return false
		}
	}
}

// event reads one element of events (see readEvents).
func (p *fastParser) event(now time.Time) (herald.Event, bool) {
	e := herald.Event{At: now}
	var sawPush, sawType, sawAt bool
	ok := p.object(func(key string) bool {
		var ok bool
		switch {
		case key == "pushId" && !sawPush:
			sawPush = true
			e.PushID, ok = p.str()
			return ok && validID(e.PushID)
		case key == "type" && !sawType:
			sawType = true
			var typ string
			typ, ok = p.str()
			e.Type = herald.EventType(typ)
			return ok && e.Type.Valid()
		case key == "at" && !sawAt:
			sawAt = true
			if p.skipSpace(); bytes.HasPrefix(p.b[p.i:], []byte("null")) {
				p.i += 4
				return true
			}
			var text string
			if text, ok = p.str(); !ok {
				return false
			}
			at, err := time.Parse(time.RFC3339, text)
			e.At = at
			return err == nil
		}
		return false
	})
	return e, ok && sawPush && sawType
}
