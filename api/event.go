package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/request/jsonsplit"
	"github.com/heraldpush/herald/web"
)

// reportEvents is POST /api/sdk/v2/events: a device reports pushes it
// received or opened. What cannot count (an unknown push, another app's,
// one not sent to the device, an unknown device, a repeat, a time out of
// range) is ignored, never refused: apps retry blindly, and the answer
// tells nothing of other apps. An event whose send to the device is still
// in flight is accepted: the store keeps it pending and counts it once the
// send is recorded sent (never, if it fails), since the app never reports
// an answered event again (docs/events.md).
func (s *server) reportEvents(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	now := s.now()
	deviceID, events, ok := readEventsFast(body, now)
	if !ok {
		o, details := request.ParseLenient(body)
		deviceID, _ = o.Str("deviceId", true, 255)
		events = readEvents(o, "events", now)
		if err := request.Invalid(details); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	plan := herald.PlanEvents(events, now)
	app := appFrom(r.Context())
	app.StreamMarks(plan.Marks)
	recorded, err := s.events.RecordEvents(r.Context(), app.ID, deviceID, plan.Marks)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	accepted := 0
	for i, ok := range plan.Accepted(recorded) {
		if ok {
			accepted++
		}
		if s.countEvent != nil {
			s.countEvent(events[i].Type, ok)
		}
	}
	// {accepted, ignored}, every event counted in one of the two, encoded
	// without reflection.
	answer := make([]byte, 0, 48)
	answer = strconv.AppendInt(append(answer, `{"accepted":`...), int64(accepted), 10)
	answer = strconv.AppendInt(append(answer, `,"ignored":`...), int64(len(events)-accepted), 10)
	web.WriteJSON(w, http.StatusOK, append(answer, '}'))
}

// readEvents reads the events array: 1 to herald.MaxEvents objects, each with
// pushId, type (received or opened) and an optional RFC 3339 at (now when
// absent or null).
func readEvents(o request.Object, name string, now time.Time) []herald.Event {
	items := o.Array(name, herald.MaxEvents)
	events := make([]herald.Event, 0, len(items))
	for i, raw := range items {
		e, ok := o.Element(fmt.Sprintf("%s[%d]", name, i), raw)
		if !ok {
			continue
		}
		ev := herald.Event{At: now}
		ev.PushID, _ = e.Str("pushId", true, 255)
		typ, ok := e.Str("type", true, 0)
		if ok && !herald.EventType(typ).Valid() {
			e.Fail("type", "must be received or opened")
		}
		ev.Type = herald.EventType(typ)
		e.DropNulls("at")
		if v, present := e.Raw("at"); present {
			text, isString := jsonsplit.String(v)
			at, err := time.Parse(time.RFC3339, text)
			if !isString || err != nil {
				e.Fail("at", "must be an RFC 3339 time such as 2025-06-11T13:04:30Z")
			}
			ev.At = at
		}
		events = append(events, ev)
	}
	return events
}
