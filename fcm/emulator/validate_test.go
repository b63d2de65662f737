package emulator

import (
	"testing"
)

// BenchmarkValidateSend measures the decoding and validation of one
// messages:send body of Herald's shape (the peer benchmark's message).
func BenchmarkValidateSend(b *testing.B) {
	body := []byte(`{"message":{"token":"perf-token-0","notification":{"title":"Herald bench","body":"One message to every registered user."},` +
		`"data":{"pushId":"push_000Vc4HZBZsiDvA3NQjWUe"},"android":{"notification":{"tag":"push_000Vc4HZBZsiDvA3NQjWUe"}},` +
		`"apns":{"headers":{"apns-collapse-id":"push_000Vc4HZBZsiDvA3NQjWUe"}},"webpush":{"headers":{"Topic":"push_000Vc4HZBZsiDvA3NQjWUe"}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		sb, ferr := decodeSendBody(body)
		if ferr != nil {
			b.Fatal(ferr)
		}
		if _, ferr := validateMessage(sb.message); ferr != nil {
			b.Fatal(ferr)
		}
	}
}
