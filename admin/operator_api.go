package admin

import (
	"encoding/json"
	"math"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// readOperator reads the body of POST /admin/v1/operators (email, name,
// role, apps) or of PATCH …/{operatorId} (name, role, apps, disabled):
// unknown members, bad JSON and members of the wrong type are refused.
func readOperator(r *http.Request, create bool) (operatorInput, error) {
	var in operatorInput
	body, err := readBody(r)
	if err != nil {
		return in, err
	}
	o, _ := request.Parse(body)
	str := func(name string) *string {
		if v, ok := o.Str(name, false, 0); ok {
			return &v
		}
		return nil
	}
	if create {
		in.Email = str("email")
	} else {
		in.Disabled = o.Boolean("disabled")
	}
	in.Name, in.Role = str("name"), str("role")
	if raw, ok := o.Raw("apps"); ok {
		var apps []string
		if err := json.Unmarshal(raw, &apps); err != nil {
			o.Fail("apps", "must be null (every app) or an array of appIds")
		} else {
			in.Apps = &apps
		}
	}
	return in, o.Check()
}

// readToken reads the body of POST …/{operatorId}/tokens.
func readToken(r *http.Request) (tokenInput, error) {
	var in tokenInput
	body, err := readBody(r)
	if err != nil {
		return in, err
	}
	o, _ := request.Parse(body)
	if v, ok := o.Str("name", false, 0); ok {
		in.Name = &v
	}
	if raw, ok := o.Raw("expiresInDays"); ok {
		days := math.NaN()
		if json.Unmarshal(raw, &days) != nil {
			days = math.NaN()
		}
		in.Days = &days
	}
	return in, o.Check()
}

// withSetupURL is an operator as POST /admin/v1/operators answers it: with
// the setup link's URL.
func withSetupURL(o herald.Operator, url string) any {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	m["setupUrl"] = url
	return m
}

func (s *server) createOperator(w http.ResponseWriter, r *http.Request) {
	in, err := readOperator(r, true)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, url, err := s.addOperator(r.Context(), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, withSetupURL(o, url))
}

func (s *server) listOperators(w http.ResponseWriter, r *http.Request) {
	ops, err := s.Store.Operators(r.Context())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if ops == nil {
		ops = []herald.Operator{}
	}
	web.JSON(w, http.StatusOK, map[string]any{"operators": ops})
}

func (s *server) getOperator(w http.ResponseWriter, r *http.Request) {
	o, err := s.Store.Operator(r.Context(), r.PathValue("operatorId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, o)
}

func (s *server) patchOperator(w http.ResponseWriter, r *http.Request) {
	in, err := readOperator(r, false)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, err := s.changeOperator(r.Context(), identity.RequestOperator(r), r.PathValue("operatorId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, o)
}

func (s *server) deleteOperator(w http.ResponseWriter, r *http.Request) {
	if err := s.removeOperator(r.Context(), identity.RequestOperator(r), r.PathValue("operatorId")); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) newSetupLink(w http.ResponseWriter, r *http.Request) {
	url, expires, err := s.renewSetupLink(r.Context(), r.PathValue("operatorId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]any{"setupUrl": url, "expiresAt": expires.UTC()})
}

func (s *server) createOperatorToken(w http.ResponseWriter, r *http.Request) {
	in, err := readToken(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	token, t, err := s.issueToken(r.Context(), r.PathValue("operatorId"), in)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, struct {
		TokenID   string    `json:"tokenId"`
		Name      string    `json:"name"`
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expiresAt"`
	}{t.ID, t.Name, token, t.ExpiresAt.UTC()})
}

func (s *server) listOperatorTokens(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	if _, err := s.Store.Operator(r.Context(), id); err != nil {
		web.Error(w, r, err)
		return
	}
	ts, err := s.Store.OperatorTokens(r.Context(), id)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if ts == nil {
		ts = []identity.OperatorToken{}
	}
	web.JSON(w, http.StatusOK, map[string]any{"tokens": ts})
}

func (s *server) deleteOperatorToken(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.DeleteOperatorToken(r.Context(), r.PathValue("operatorId"), r.PathValue("tokenId")); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) resetOperatorTOTP(w http.ResponseWriter, r *http.Request) {
	if err := s.resetTOTP(r.Context(), r.PathValue("operatorId")); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// getMe answers who the request's credential belongs to: the operator, as
// stored now, or the owner.
func (s *server) getMe(w http.ResponseWriter, r *http.Request) {
	web.JSON(w, http.StatusOK, identity.RequestOperator(r))
}
