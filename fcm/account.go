package fcm

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
)

// GoogleTokenURI is the only token_uri a service-account file may name
// unless any token URI is allowed: the server posts signed assertions there,
// so a tenant-chosen URI would let a tenant collect them.
const GoogleTokenURI = "https://oauth2.googleapis.com/token"

// ServiceAccount is what Herald needs to know about a validated
// Google service-account file.
type ServiceAccount struct {
	ProjectID   string
	ClientEmail string
	TokenURI    string
}

// InvalidServiceAccountError reports the first problem found in a
// service-account file. Field is the JSON key at fault.
type InvalidServiceAccountError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *InvalidServiceAccountError) Error() string {
	if e.Field == "" {
		return "fcm: invalid service account: " + e.Reason
	}
	return fmt.Sprintf("fcm: invalid service account: %s: %s", e.Field, e.Reason)
}

// serviceAccountFile holds the keys of a service-account file that Herald checks.
type serviceAccountFile struct {
	Type        string `json:"type"`
	ProjectID   string `json:"project_id"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
	TokenURI    string `json:"token_uri"`
	// ProjectInfo and Client are members of google-services.json, the
	// Android app's client config, which newcomers upload by mistake.
	ProjectInfo json.RawMessage `json:"project_info"`
	Client      json.RawMessage `json:"client"`
}

// ReasonClientConfig is why a google-services.json upload is refused.
const ReasonClientConfig = "this is google-services.json, the app's client config, not a service account: " +
	"in the Firebase console open Project settings, Service accounts, and use Generate new private key"

// ParseServiceAccount validates a Google service-account JSON file and returns
// its identity. token_uri must be GoogleTokenURI unless allowAnyTokenURI, in
// which case any absolute http or https URL is accepted (tests, the emulator).
// Every failure is an *InvalidServiceAccountError.
func ParseServiceAccount(data []byte, allowAnyTokenURI bool) (ServiceAccount, error) {
	var f serviceAccountFile
	if err := json.Unmarshal(data, &f); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return ServiceAccount{}, &InvalidServiceAccountError{Field: typeErr.Field, Reason: "must be a string"}
		}
		return ServiceAccount{}, &InvalidServiceAccountError{Reason: "not a JSON object"}
	}
	if err := f.validate(allowAnyTokenURI); err != nil {
		return ServiceAccount{}, err
	}
	return ServiceAccount{ProjectID: f.ProjectID, ClientEmail: f.ClientEmail, TokenURI: f.TokenURI}, nil
}

// validate checks the fields in a fixed order so the first problem is stable.
func (f serviceAccountFile) validate(allowAnyTokenURI bool) error {
	switch {
	case f.Type == "" && (f.ProjectInfo != nil || f.Client != nil):
		return &InvalidServiceAccountError{Reason: ReasonClientConfig}
	case f.Type != "service_account":
		return &InvalidServiceAccountError{Field: "type", Reason: `must be "service_account"`}
	case f.ProjectID == "":
		return &InvalidServiceAccountError{Field: "project_id", Reason: "required"}
	case f.ClientEmail == "":
		return &InvalidServiceAccountError{Field: "client_email", Reason: "required"}
	case f.PrivateKey == "":
		return &InvalidServiceAccountError{Field: "private_key", Reason: "required"}
	}
	if reason := checkPrivateKey(f.PrivateKey); reason != "" {
		return &InvalidServiceAccountError{Field: "private_key", Reason: reason}
	}
	if reason := checkTokenURI(f.TokenURI, allowAnyTokenURI); reason != "" {
		return &InvalidServiceAccountError{Field: "token_uri", Reason: reason}
	}
	return nil
}

// checkPrivateKey returns why key is not a PEM RSA private key, or "".
func checkPrivateKey(key string) string {
	block, _ := pem.Decode([]byte(key))
	if block == nil {
		return "not PEM encoded"
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); !ok {
			return "not an RSA key"
		}
		return ""
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		return "not a PKCS#8 or PKCS#1 RSA private key"
	}
	return ""
}

// checkTokenURI returns why uri may not be used as the token endpoint, or "".
func checkTokenURI(uri string, allowAny bool) string {
	if uri == GoogleTokenURI {
		return ""
	}
	if !allowAny {
		return "must be " + GoogleTokenURI
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an absolute http or https URL"
	}
	return ""
}
