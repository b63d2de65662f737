package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"

	"github.com/heraldpush/herald"
)

// A push's requested users are stored with the push as one value, not a
// row each: accepting a 500-user push is then a handful of statements on
// the one writer instead of 500 more. The value: a version byte, the
// number of recipients, then per recipient the user (length-prefixed) and
// a byte saying whether its own message follows (title, content, link,
// image, each length-prefixed). Pushes accepted before it keep theirs in
// push_recipients (the column is NULL).
const recipientsVersion = 1

// encodeRecipients encodes a push's recipients, in request order.
func encodeRecipients(rs []herald.Recipient) []byte {
	n := 8
	for _, r := range rs {
		n += 8 + len(r.UserID)
		if c := r.Content; c != nil {
			n += 16 + len(c.Title) + len(c.Content) + len(c.LinkURL) + len(c.ImageURL)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, recipientsVersion)
	b = binary.AppendUvarint(b, uint64(len(rs)))
	appendString := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, r := range rs {
		appendString(r.UserID)
		if c := r.Content; c == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			appendString(c.Title)
			appendString(c.Content)
			appendString(c.LinkURL)
			appendString(c.ImageURL)
		}
	}
	return b
}

// errRecipients is a stored recipient list that cannot be read.
var errRecipients = errors.New("sqlstore: malformed recipients")

// decodeRecipients decodes what encodeRecipients made.
func decodeRecipients(b []byte) ([]herald.Recipient, error) {
	if len(b) == 0 || b[0] != recipientsVersion {
		return nil, errRecipients
	}
	r := slotReader{b: b[1:]}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, errRecipients
	}
	rs := make([]herald.Recipient, n)
	for i := range rs {
		rs[i].UserID = r.string()
		if r.byte() == 1 {
			rs[i].Content = &herald.Content{Title: r.string(), Content: r.string(), LinkURL: r.string(), ImageURL: r.string()}
		}
	}
	if r.err != nil {
		return nil, errRecipients
	}
	return rs, nil
}

// Recipients returns a push's requested users in request order.
func (s *PushStore) Recipients(ctx context.Context, pushID string) ([]herald.Recipient, error) {
	var list []byte
	err := s.reader().queryRow(ctx, `SELECT recipients FROM pushes WHERE id = ?`, pushID).Scan(&list)
	switch {
	case errors.Is(err, herald.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case list != nil:
		return decodeRecipients(list)
	}
	return s.recipientRows(ctx, pushID)
}

// recipientRows reads the recipients of a push accepted before they were
// stored with it.
func (s *PushStore) recipientRows(ctx context.Context, pushID string) ([]herald.Recipient, error) {
	var out []herald.Recipient
	err := s.reader().each(ctx, func(row scanner) error {
		var r herald.Recipient
		var title, content, link, image sql.NullString
		if err := row.Scan(&r.UserID, &title, &content, &link, &image); err != nil {
			return err
		}
		if title.Valid {
			r.Content = &herald.Content{Title: title.String, Content: content.String, LinkURL: link.String, ImageURL: image.String}
		}
		out = append(out, r)
		return nil
	}, `SELECT user_id, title, content, link_url, image_url FROM push_recipients WHERE push_id = ? ORDER BY idx`, pushID)
	return out, err
}
