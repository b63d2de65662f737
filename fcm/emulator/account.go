package emulator

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
)

// NewServiceAccount returns a valid service-account file for projectID whose
// token_uri is tokenURI, with a fresh RSA-2048 key and the client email
// herald@<projectID>.iam.gserviceaccount.com. keyPEM, when not nil, is used
// instead of a fresh key (generating one takes tens of milliseconds).
func NewServiceAccount(projectID, tokenURI string, keyPEM []byte) ([]byte, error) {
	if keyPEM == nil {
		var err error
		if keyPEM, err = NewKeyPEM(); err != nil {
			return nil, err
		}
	}
	id := make([]byte, 20)
	rand.Read(id)
	email := "herald@" + projectID + ".iam.gserviceaccount.com"
	return json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  projectID,
		"private_key_id":              hex.EncodeToString(id),
		"private_key":                 string(keyPEM),
		"client_email":                email,
		"client_id":                   "100000000000000000001",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"client_x509_cert_url":        "https://www.googleapis.com/robot/v1/metadata/x509/" + email,
		"universe_domain":             "googleapis.com",
	}, "", "  ")
}

// NewKeyPEM generates an RSA-2048 private key in PKCS#8 PEM.
func NewKeyPEM() ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
