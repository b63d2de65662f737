package herald

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// MasterKey encrypts secrets at rest (FCM service-account files, webhook
// signing secrets) with AES-256-GCM.
type MasterKey struct {
	aead  cipher.AEAD
	check []byte
	chain []byte
}

// checkLabel is the fixed text whose HMAC under the key is the key's check
// value. Changing it would make every stored check value mismatch.
const checkLabel = "herald master key check v1"

// chainLabel is the fixed text whose HMAC under the master key is the
// key that signs the access records' chain (access.Key).
const chainLabel = "herald access-record chain v1"

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
	return &MasterKey{aead: aead, check: derive(raw, checkLabel), chain: derive(raw, chainLabel)}, nil
}

// derive is HMAC-SHA256 of label under raw: a key of its own for each use
// of the master key.
func derive(raw []byte, label string) []byte {
	mac := hmac.New(sha256.New, raw)
	mac.Write([]byte(label))
	return mac.Sum(nil)
}

// Check returns the key's check value: HMAC-SHA256 of a fixed label under
// the key. It tells keys apart without revealing them, so a store may keep
// it in the clear.
func (k *MasterKey) Check() []byte { return append([]byte(nil), k.check...) }

// AccessKey returns the key that signs the access records' chain (an
// access.Key, which it converts to without a cast), derived from the
// master key: whoever can write the database but lacks the master key
// cannot sign a record.
func (k *MasterKey) AccessKey() []byte {
	if k == nil {
		return nil
	}
	return k.chain
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

// ErrMasterKeyMismatch is VerifyMasterKey's answer when the key is not the
// one the store's secrets were sealed with.
var ErrMasterKeyMismatch = errors.New("the master key does not match the one this database was created with")

// MasterKeyStore keeps the master key's check value.
type MasterKeyStore interface {
	// MasterKeyCheck returns the stored check value, or ErrNotFound.
	MasterKeyCheck(ctx context.Context) ([]byte, error)
	// SetMasterKeyCheck stores the check value.
	SetMasterKeyCheck(ctx context.Context, check []byte) error
	// SealedSample returns one sealed value the store holds (FCM
	// credentials or a webhook secret), or ErrNotFound when it holds none.
	SealedSample(ctx context.Context) ([]byte, error)
}

// VerifyMasterKey checks k against the store at start, so that a process
// given another key refuses to start instead of failing every push later.
// The first start stores k's check value; a store from before check values
// proves k by opening one of its sealed values first. It returns
// ErrMasterKeyMismatch when k is not the store's key.
func VerifyMasterKey(ctx context.Context, s MasterKeyStore, k *MasterKey) error {
	stored, err := s.MasterKeyCheck(ctx)
	if err == nil {
		if !hmac.Equal(stored, k.check) {
			return ErrMasterKeyMismatch
		}
		return nil
	}
	if !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("read the master key check: %w", err)
	}
	sample, err := s.SealedSample(ctx)
	switch {
	case err == nil:
		if _, err := k.Open(sample); err != nil {
			return ErrMasterKeyMismatch
		}
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("read a sealed value: %w", err)
	}
	if err := s.SetMasterKeyCheck(ctx, k.check); err != nil {
		return fmt.Errorf("store the master key check: %w", err)
	}
	return nil
}
