package api

import (
	"context"
	"net/http"

	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// subscribe is POST /api/topic/v2/subscribe (spec 4.5).
func (s *server) subscribe(w http.ResponseWriter, r *http.Request) {
	s.topicMembership(w, r, s.store.SubscribeTopic)
}

// unsubscribe is POST /api/topic/v2/unsubscribe (spec 4.5).
func (s *server) unsubscribe(w http.ResponseWriter, r *http.Request) {
	s.topicMembership(w, r, s.store.UnsubscribeTopic)
}

// topicMembership reads {topic, userIds} and applies change to every device
// of those users; it answers the topic and the number of devices changed.
func (s *server) topicMembership(w http.ResponseWriter, r *http.Request, change func(ctx context.Context, appID, topic string, userIDs []string) (int, error)) {
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, _ := request.Parse(body)
	topic := o.Topic("topic")
	ids := o.UserIDs("userIds")
	if err := o.Check(); err != nil {
		web.Error(w, r, err)
		return
	}
	n, err := change(r.Context(), appFrom(r.Context()).ID, topic, ids)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]any{"topic": topic, "devices": n})
}
