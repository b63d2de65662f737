// Package webhook signs and sends Herald's webhook events following the
// Standard Webhooks specification (https://www.standardwebhooks.com).
//
// A message is signed with HMAC-SHA256 over "<msg id>.<unix seconds>.<body>"
// using the base64-decoded part of a "whsec_" secret, and travels with the
// headers webhook-id, webhook-timestamp and webhook-signature. Receivers
// check it with Verify.
package webhook
