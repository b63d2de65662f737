package fcm

import (
	"context"
	"errors"

	"github.com/heraldpush/herald"
)

// Deliver sends one notification with an app's service-account file, cached
// under appKey: Herald's view of Send. With n.ValidateOnly FCM only checks
// it (validate_only). Errors are *herald.SendError.
func (c *Client) Deliver(ctx context.Context, appKey string, serviceAccount []byte, n herald.Notification) error {
	err := c.send(ctx, Credentials{Key: appKey, JSON: serviceAccount}, sendRequest{ValidateOnly: n.ValidateOnly,
		Message: BuildMessage(n.Token, Notification{
			Title: n.Title, Body: n.Body, ImageURL: n.ImageURL, LinkURL: n.LinkURL, PushID: n.PushID, Badge: n.Badge,
		})})
	if err == nil {
		return nil
	}
	return heraldError(err)
}

// AuthorizeApp makes sure an access token for the app is at hand: Herald's
// view of Authorize. Errors are *herald.SendError.
func (c *Client) AuthorizeApp(ctx context.Context, appKey string, serviceAccount []byte) error {
	if err := c.Authorize(ctx, Credentials{Key: appKey, JSON: serviceAccount}); err != nil {
		return heraldError(err)
	}
	return nil
}

// heraldError classifies a failed send for delivery.
func heraldError(err error) error {
	var se *SendError
	if !errors.As(err, &se) {
		return &herald.SendError{Class: herald.SendRetry, Err: err}
	}
	return &herald.SendError{Class: sendClass(se.Class), RetryAfter: se.RetryAfter, Err: err}
}

func sendClass(c Class) herald.SendClass {
	switch c {
	case ClassUnregistered:
		return herald.SendUnregistered
	case ClassInvalidToken, ClassSenderMismatch:
		return herald.SendInvalidToken
	case ClassRetry:
		return herald.SendRetry
	case ClassAuth:
		return herald.SendAuth
	case ClassThirdPartyAuth:
		return herald.SendThirdPartyAuth
	}
	return herald.SendRejected
}
