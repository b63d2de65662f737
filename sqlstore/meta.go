package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// masterKeyCheck is the meta row holding the master key's check value.
const masterKeyCheck = "master-key-check"

// MasterKeyCheck returns the stored check value of the master key, or
// herald.ErrNotFound.
func (s *NodeStore) MasterKeyCheck(ctx context.Context) ([]byte, error) {
	var v []byte
	err := s.reader().queryRow(ctx, `SELECT value FROM meta WHERE name = ?`, masterKeyCheck).Scan(&v)
	return v, err
}

// SetMasterKeyCheck stores the master key's check value.
func (s *NodeStore) SetMasterKeyCheck(ctx context.Context, check []byte) error {
	return s.inTx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			masterKeyCheck, check, s.Now().UnixMilli())
		return err
	})
}

// SealedSample returns one sealed value (FCM credentials or a webhook
// secret), or herald.ErrNotFound when no app has one.
func (s *NodeStore) SealedSample(ctx context.Context) ([]byte, error) {
	var v []byte
	err := s.reader().queryRow(ctx, `SELECT v FROM (
		SELECT fcm_credentials AS v FROM apps WHERE length(fcm_credentials) > 0
		UNION ALL
		SELECT webhook_secret FROM apps WHERE length(webhook_secret) > 0
	) AS sealed LIMIT 1`).Scan(&v)
	return v, err
}

// backupAt is the meta row a backup's copy holds: the instant it was
// taken (ms, as text).
const backupAt = "backup-at"

// SetBackupAt records in a copy of the store the instant it was taken,
// which its restore holds the pushes due or sending at.
func (s *NodeStore) SetBackupAt(ctx context.Context, at time.Time) error {
	return s.inTx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			backupAt, []byte(strconv.FormatInt(at.UnixMilli(), 10)), s.Now().UnixMilli())
		return err
	})
}

// BackupAt returns the instant a copy of the store was taken:
// herald.ErrNotFound for a store that is not a copy `herald backup` made.
func (s *NodeStore) BackupAt(ctx context.Context) (time.Time, error) {
	var v []byte
	if err := s.reader().queryRow(ctx, `SELECT value FROM meta WHERE name = ?`, backupAt).Scan(&v); err != nil {
		return time.Time{}, err
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlstore: the meta row %s holds %q: %w", backupAt, v, err)
	}
	return time.UnixMilli(ms).UTC(), nil
}
