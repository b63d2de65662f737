package emulator

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

const (
	jwtBearerGrant  = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenLifetime   = 3600 // seconds, as Google issues
	iamEmailSuffix  = ".iam.gserviceaccount.com"
	deniedPrefix    = "denied"
	revokedPrefix   = "revoked"
	accessTokenPfx  = "emu-"
	maxFormBodySize = 64 << 10
)

// jwtClaims are the claims of a service account's assertion that the
// emulator checks.
type jwtClaims struct {
	Iss   string `json:"iss"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
}

// handleToken answers the OAuth2 JWT-bearer grant. It does not verify the
// signature (it has no public key); an issuer or project starting with
// "denied" is refused the way Google refuses a revoked key. A project
// starting with "revoked" gets tokens that FCM then refuses (401
// UNAUTHENTICATED), even fresh ones. While SetTokenEndpointStatus is in
// force it answers that status instead.
func (e *Emulator) handleToken(w http.ResponseWriter, r *http.Request) {
	e.tokensMu.RLock()
	status := e.tokenStatus
	e.tokensMu.RUnlock()
	if status != 0 {
		writeJSON(w, status, map[string]string{"error": "internal_failure", "error_description": http.StatusText(status)})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBodySize)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, "invalid_request", "Malformed request body.")
		return
	}
	if r.PostForm.Get("grant_type") != jwtBearerGrant {
		writeOAuthError(w, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
		return
	}
	claims, reason := parseAssertion(r.PostForm.Get("assertion"), e.now())
	if reason != "" {
		writeOAuthError(w, "invalid_grant", reason)
		return
	}
	project := projectOf(claims.Iss)
	if strings.HasPrefix(claims.Iss, deniedPrefix) || strings.HasPrefix(project, deniedPrefix) {
		writeOAuthError(w, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	token := accessTokenPfx + rand.Text()
	if !strings.HasPrefix(project, revokedPrefix) {
		e.tokensMu.Lock()
		e.tokens[token] = project
		e.tokensMu.Unlock()
	}
	e.grants.Add(1)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": token, "token_type": "Bearer", "expires_in": tokenLifetime,
	})
}

// parseAssertion decodes the claims of a JWT assertion and returns why they
// are unacceptable, or "".
func parseAssertion(assertion string, now time.Time) (jwtClaims, string) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return jwtClaims{}, "Invalid JWT: not three base64url parts."
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return jwtClaims{}, "Invalid JWT: claims are not base64url."
	}
	var c jwtClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return jwtClaims{}, "Invalid JWT: claims are not a JSON object."
	}
	switch {
	case c.Iss == "":
		return c, "Invalid JWT: iss is required."
	case c.Scope == "":
		return c, "Invalid JWT: scope is required."
	case c.Aud == "":
		return c, "Invalid JWT: aud is required."
	case c.Exp == 0:
		return c, "Invalid JWT: exp is required."
	case c.Exp <= now.Unix():
		return c, "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
	}
	return c, ""
}

// projectOf returns the project of a service-account email
// (name@project.iam.gserviceaccount.com), or "" for other issuers.
func projectOf(email string) string {
	_, domain, ok := strings.Cut(email, "@")
	if !ok {
		return ""
	}
	project, ok := strings.CutSuffix(domain, iamEmailSuffix)
	if !ok {
		return ""
	}
	return project
}

// tokenProject reports whether the request carries an access token issued by
// this emulator, and the project it was issued for ("" for any project).
func (e *Emulator) tokenProject(r *http.Request) (string, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", false
	}
	e.tokensMu.RLock()
	project, ok := e.tokens[token]
	e.tokensMu.RUnlock()
	return project, ok
}

// writeOAuthError writes an OAuth2 error answer as Google's token endpoint does.
func writeOAuthError(w http.ResponseWriter, code, description string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": description})
}

// writeJSON writes v as a JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
