package herald

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// MasterKey encrypts secrets at rest (FCM service-account files, webhook
// signing secrets) with AES-256-GCM.
type MasterKey struct{ aead cipher.AEAD }

// ParseMasterKey reads a master key given as standard base64 of 32 bytes.
func ParseMasterKey(b64 string) (*MasterKey, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 32 {
		return nil, errors.New("master key must be base64 of 32 bytes")
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &MasterKey{aead: aead}, nil
}

// NewMasterKeyText returns a fresh random master key in its base64 form.
func NewMasterKeyText() string {
	raw := make([]byte, 32)
	rand.Read(raw)
	return base64.StdEncoding.EncodeToString(raw)
}

// Seal encrypts plaintext; the nonce is stored in front of the ciphertext.
func (k *MasterKey) Seal(plaintext []byte) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	return k.aead.Seal(nonce, nonce, plaintext, nil)
}

// Open decrypts what Seal produced.
func (k *MasterKey) Open(sealed []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	out, err := k.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, fmt.Errorf("open sealed value (wrong master key?): %w", err)
	}
	return out, nil
}
