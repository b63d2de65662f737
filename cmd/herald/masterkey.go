package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/server"
)

// masterKey returns the master key, configured or kept in the data dir
// (generated there on first start), once the store has confirmed that it
// is the key its secrets are sealed with (DESIGN.md section 2).
func (s *service) masterKey(ctx context.Context, srv *server.Server) (*herald.MasterKey, error) {
	text, created, err := s.cfg.secretOrFile(s.cfg.MasterKey, "master-key", herald.NewMasterKeyText)
	if err != nil {
		return nil, err
	}
	key, err := herald.ParseMasterKey(text)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	err = herald.VerifyMasterKey(ctx, srv.Store, key)
	if errors.Is(err, herald.ErrMasterKeyMismatch) {
		return nil, s.keyMismatch(created, srv.DB.Shared())
	}
	return key, err
}

// keyMismatch says which key was given and what to do. A key generated
// just now is removed again: it can open nothing here.
func (s *service) keyMismatch(created, shared bool) error {
	file := filepath.Join(s.cfg.DataDir, "master-key")
	const keep = "Without that key the FCM credentials and webhook secrets stored here cannot be opened; nothing was changed"
	switch {
	case shared:
		return fmt.Errorf("%w: HERALD_MASTER_KEY (--master-key) holds another key. Start every node with the key the database's secrets were sealed with. %s",
			herald.ErrMasterKeyMismatch, keep)
	case s.cfg.MasterKey != "":
		return fmt.Errorf("%w: HERALD_MASTER_KEY (--master-key) holds another key. Start with the key this database was created with (%s, if it was generated there). %s",
			herald.ErrMasterKeyMismatch, file, keep)
	case created:
		if err := os.Remove(file); err != nil {
			return errors.Join(herald.ErrMasterKeyMismatch, err)
		}
		return fmt.Errorf("%w: %s was missing, so a new key was generated and discarded. Restore the original file or set HERALD_MASTER_KEY to the original key. %s",
			herald.ErrMasterKeyMismatch, file, keep)
	default:
		return fmt.Errorf("%w: %s holds another key. Restore the original file or set HERALD_MASTER_KEY to the original key. %s",
			herald.ErrMasterKeyMismatch, file, keep)
	}
}
