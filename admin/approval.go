package admin

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/web"
)

// A push awaiting approval (DESIGN 14) is approved or rejected by an
// operator other than its composer, or by the owner's token: POST
// /admin/v1/pushes/{pushId}/approve {reason?} and /reject {reason}, and
// the dashboard's Approvals page. Each is one step of the push
// (delivery's Decide); its access record is the route's.

// decision is the body of approve and reject.
type decision struct {
	Reason *string `json:"reason"`
}

// approvePush is POST /admin/v1/pushes/{pushId}/approve; its body may be
// empty.
func (s *server) approvePush(w http.ResponseWriter, r *http.Request) {
	s.decide(w, r, herald.ApprovalApproved)
}

// rejectPush is POST /admin/v1/pushes/{pushId}/reject; reason is required.
func (s *server) rejectPush(w http.ResponseWriter, r *http.Request) {
	s.decide(w, r, herald.ApprovalRejected)
}

func (s *server) decide(w http.ResponseWriter, r *http.Request, action herald.ApprovalAction) {
	p, err := s.guard.PushOf(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var body decision
	raw, err := readBody(r)
	if err == nil && (action == herald.ApprovalRejected || len(bytes.TrimSpace(raw)) > 0) {
		err = decodeBody(raw, &body)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	reason := ""
	if body.Reason != nil {
		reason = *body.Reason
	}
	if d := reasonProblems(action, reason); len(d) > 0 {
		web.Error(w, r, herald.Invalid(d...))
		return
	}
	p, err = s.decidePush(r, p, herald.Approval{Action: action, By: identity.RequestOperator(r).ID, Reason: strings.TrimSpace(reason)})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.writePush(w, r, p)
}

// decidePush takes the decision on p, of the app it loads, for the
// admin API and the dashboard.
func (s *server) decidePush(r *http.Request, p herald.Push, d herald.Approval) (herald.Push, error) {
	app, err := s.Store.App(r.Context(), p.AppID)
	if err != nil {
		return herald.Push{}, err
	}
	return s.Delivery.Decide(r.Context(), app, p, d)
}

// reasonProblems judges a decision's reason: a rejection's is required,
// either at most herald.MaxApprovalReason characters.
func reasonProblems(action herald.ApprovalAction, reason string) []herald.Detail {
	if action == herald.ApprovalRejected && strings.TrimSpace(reason) == "" {
		return []herald.Detail{{Field: "reason", Reason: "is required: say why the push is rejected"}}
	}
	if p := herald.LengthProblem(reason, herald.MaxApprovalReason); p != "" {
		return []herald.Detail{{Field: "reason", Reason: p}}
	}
	return nil
}
