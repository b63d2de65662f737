package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// Operator management (DESIGN 11), shared by the admin API (operator_api.go)
// and the dashboard's Operators page (dashboard_operator.go): both read
// their request into an operatorInput or a tokenInput and call these, so
// the two apply the same rules.

const (
	// setupLinkTTL is how long a setup link works.
	setupLinkTTL = 24 * time.Hour
	// maxOperatorName and maxTokenName bound the names, in characters;
	// maxEmail is RFC 5321's bound of an address.
	maxOperatorName = 200
	maxTokenName    = 100
	maxEmail        = 254
	// maxTokenDays bounds an API token's life.
	maxTokenDays = 365
)

// operatorInput is an operator's members as a request gave them; nil
// members were not given.
type operatorInput struct {
	Email, Name, Role *string
	// Apps, when set, are the operator's apps; a pointer to nil is every
	// app.
	Apps     *[]string
	Disabled *bool
}

// tokenInput is the body of a new API token.
type tokenInput struct {
	Name *string
	// Days is expiresInDays; nil when absent, NaN when not a number.
	Days *float64
}

// checkOperator judges the members given, and on create that email, name and role
// are: each problem names its member, an unknown app by its ID. It returns
// the change the members make.
func (s *server) checkOperator(ctx context.Context, in operatorInput, create bool) (identity.OperatorChange, []herald.Detail, error) {
	var c identity.OperatorChange
	var d []herald.Detail
	required := func(field string, v *string) bool {
		if v == nil && create {
			d = append(d, herald.Detail{Field: field, Reason: "is required"})
		}
		return v != nil
	}
	if required("email", in.Email) {
		if reason := emailProblem(*in.Email); reason != "" {
			d = append(d, herald.Detail{Field: "email", Reason: reason})
		}
	}
	if required("name", in.Name) {
		name := strings.TrimSpace(*in.Name)
		if name == "" || utf8.RuneCountInString(name) > maxOperatorName {
			d = append(d, herald.Detail{Field: "name", Reason: fmt.Sprintf("must be 1 to %d characters", maxOperatorName)})
		}
		c.Name = &name
	}
	if required("role", in.Role) {
		role, ok := herald.ParseRole(*in.Role)
		if !ok {
			d = append(d, herald.Detail{Field: "role", Reason: "must be viewer, operator or admin"})
		}
		c.Role = &role
	}
	if in.Apps != nil {
		apps, problems, err := s.checkApps(ctx, *in.Apps)
		if err != nil {
			return c, nil, err
		}
		d = append(d, problems...)
		c.Apps = &apps
	}
	c.Disabled = in.Disabled
	return c, d, nil
}

// checkApps judges an operator's list of apps: each must exist. Nil stays
// nil (every app); duplicates are dropped.
func (s *server) checkApps(ctx context.Context, ids []string) ([]string, []herald.Detail, error) {
	if ids == nil {
		return nil, nil, nil
	}
	out := []string{}
	var d []herald.Detail
	for i, id := range ids {
		_, err := s.Store.App(ctx, id)
		switch {
		case errors.Is(err, herald.ErrNotFound):
			d = append(d, herald.Detail{Field: fmt.Sprintf("apps[%d]", i), Reason: fmt.Sprintf("no app %q exists", id)})
			continue
		case err != nil:
			return nil, nil, err
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, d, nil
}

// emailProblem says what is wrong with an operator's email; "" when
// nothing is.
func emailProblem(email string) string {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Name != "" || a.Address != email || len(email) > maxEmail || !strings.Contains(email, "@") {
		return fmt.Sprintf("must be an email address such as name@example.com, of at most %d characters", maxEmail)
	}
	if !identity.MatchableEmail(email) {
		// Emails compare by their ASCII letters alone (identity.EmailKey):
		// a local part beyond ASCII would match no sign-in.
		return "must have an ASCII local part (before the @)"
	}
	return ""
}

// addOperator creates an operator from in with a first setup link, and
// returns the operator and the link's URL.
func (s *server) addOperator(ctx context.Context, in operatorInput) (herald.Operator, string, error) {
	c, d, err := s.checkOperator(ctx, in, true)
	if err == nil && len(d) > 0 {
		err = herald.Invalid(d...)
	}
	if err != nil {
		return herald.Operator{}, "", err
	}
	o := herald.Operator{ID: herald.NewID("op_", s.Now()), Email: *in.Email, Name: *c.Name, Role: *c.Role,
		CreatedAt: s.Now().UTC().Truncate(time.Millisecond)}
	if c.Apps != nil {
		o.Apps = *c.Apps
	}
	token, link := s.setupLink(o.ID)
	if err := s.Store.CreateOperator(ctx, o, link); err != nil {
		return herald.Operator{}, "", err
	}
	return o, s.setupURL(token), nil
}

// changeOperator applies in to operator id on behalf of by, who cannot
// disable themselves.
func (s *server) changeOperator(ctx context.Context, by herald.Operator, id string, in operatorInput) (herald.Operator, error) {
	c, d, err := s.checkOperator(ctx, in, false)
	if err != nil {
		return herald.Operator{}, err
	}
	if c.Disabled != nil && *c.Disabled && by.ID == id {
		d = append(d, herald.Detail{Field: "disabled", Reason: "cannot disable yourself"})
	}
	if len(d) > 0 {
		return herald.Operator{}, herald.Invalid(d...)
	}
	return s.Store.UpdateOperator(ctx, id, c)
}

// removeOperator deletes operator id on behalf of by, who cannot delete
// themselves.
func (s *server) removeOperator(ctx context.Context, by herald.Operator, id string) error {
	if by.ID == id {
		return herald.Invalid(herald.Detail{Field: "operatorId", Reason: "cannot delete yourself"})
	}
	return s.Store.DeleteOperator(ctx, id)
}

// setupLink makes a setup link for operator id: the token for its URL, and
// the link as stored (the token's hash).
func (s *server) setupLink(id string) (string, identity.SetupLink) {
	token := rand.Text()
	return token, identity.SetupLink{OperatorID: id, TokenHash: identity.TokenHash(token), Expires: s.Now().Add(setupLinkTTL)}
}

// setupURL is the setup page's URL for a link's token.
func (s *server) setupURL(token string) string {
	return strings.TrimSuffix(s.AdminURL, "/") + "/setup?token=" + token
}

// renewSetupLink gives operator id a new setup link, voiding the old one,
// and returns its URL and when it expires.
func (s *server) renewSetupLink(ctx context.Context, id string) (string, time.Time, error) {
	token, link := s.setupLink(id)
	if err := s.Store.ReplaceSetupLink(ctx, link); err != nil {
		return "", time.Time{}, err
	}
	return s.setupURL(token), link.Expires, nil
}

// issueToken makes an API token for operator id: the token, shown once,
// and the token as stored.
func (s *server) issueToken(ctx context.Context, id string, in tokenInput) (string, identity.OperatorToken, error) {
	var d []herald.Detail
	var name string
	switch {
	case in.Name == nil:
		d = append(d, herald.Detail{Field: "name", Reason: "is required"})
	default:
		name = strings.TrimSpace(*in.Name)
		if name == "" || utf8.RuneCountInString(name) > maxTokenName {
			d = append(d, herald.Detail{Field: "name", Reason: fmt.Sprintf("must be 1 to %d characters", maxTokenName)})
		}
	}
	var days int
	switch {
	case in.Days == nil:
		d = append(d, herald.Detail{Field: "expiresInDays", Reason: "is required"})
	case *in.Days != float64(int(*in.Days)) || *in.Days < 1 || *in.Days > maxTokenDays:
		d = append(d, herald.Detail{Field: "expiresInDays", Reason: fmt.Sprintf("must be a whole number of days from 1 to %d", maxTokenDays)})
	default:
		days = int(*in.Days)
	}
	if len(d) > 0 {
		return "", identity.OperatorToken{}, herald.Invalid(d...)
	}
	now := s.Now().UTC().Truncate(time.Millisecond)
	token := identity.OperatorTokenPrefix + rand.Text()
	t := identity.OperatorToken{ID: herald.NewID("tok_", now), OperatorID: id, Name: name, Hash: identity.TokenHash(token),
		CreatedAt: now, ExpiresAt: now.AddDate(0, 0, days)}
	if err := s.Store.CreateOperatorToken(ctx, t); err != nil {
		return "", t, err
	}
	return token, t, nil
}

// resetTOTP removes operator id's second factor; ErrNotFound when there is
// no such operator.
func (s *server) resetTOTP(ctx context.Context, id string) error {
	if _, err := s.Store.Operator(ctx, id); err != nil {
		return err
	}
	return s.Store.ResetTOTP(ctx, id)
}
