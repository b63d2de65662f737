package emulator

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// FuzzMembers checks members against encoding/json: for every valid JSON
// value, the same object members (raw values byte for byte, the last of a
// repeated key) or the same refusal of a value that is not an object.
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d":"x\"y\\", "e":null}`, `{"a":1,"a":2}`,
		`{"k\u0041y":true,"n":-1.5e3,"o":{"p":[]}}`, `[1,2]`, `"s"`, `7`, `{"a":"\ud800"}`,
		"{\"\xff\":\"\xfe\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(raw, &want)
		got, ok := members(raw)
		if isObject := wantErr == nil && bytes.TrimSpace(raw)[0] == '{'; ok != isObject {
			t.Fatalf("members(%q) ok = %v, encoding/json: %v %v", raw, ok, want, wantErr)
		}
		if !ok {
			return
		}
		eq := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }
		if !maps.EqualFunc(map[string]json.RawMessage(got), want, eq) {
			t.Fatalf("members(%q) = %q, encoding/json %q", raw, got, want)
		}
		for k, v := range got {
			var s string
			wantOK := json.Unmarshal(v, &s) == nil && v[0] == '"'
			if gs, gotOK := stringValue(v); gotOK != wantOK || gs != s {
				t.Fatalf("stringValue(%q) = %q %v, encoding/json %q %v (key %q)", v, gs, gotOK, s, wantOK, k)
			}
		}
	})
}

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
