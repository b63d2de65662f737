package jsonsplit

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// randomJSON returns a random JSON value of at most depth levels, with
// white space, escapes and numbers where a scanner may stumble.
func randomJSON(r *rand.Rand, depth int) string {
	sp := func() string { return []string{"", " ", "\n\t ", "\r\n"}[r.IntN(4)] }
	kind := r.IntN(8)
	if depth == 0 {
		kind %= 4
	}
	switch kind {
	case 0:
		return []string{`""`, `"a"`, `"q\"uote"`, `"back\\"`, `"\\\""`, `"}]{[,:"`, `"가\u00e9\ud83d\ude00"`, `"\/"`}[r.IntN(8)]
	case 1:
		return []string{"0", "-1", "12.5e+3", "1E-2", "-0.0"}[r.IntN(5)]
	case 2:
		return []string{"true", "false", "null"}[r.IntN(3)]
	case 3:
		return strconv.Quote(strings.Repeat("x", r.IntN(5)))
	case 4, 5:
		var parts []string
		for i := range r.IntN(4) {
			key := []string{`"k` + strconv.Itoa(i) + `"`, `"k\u0031"`, `""`, `"a\"b"`}[r.IntN(4)]
			parts = append(parts, sp()+key+sp()+":"+sp()+randomJSON(r, depth-1)+sp())
		}
		return "{" + strings.Join(parts, ",") + sp() + "}"
	default:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, sp()+randomJSON(r, depth-1)+sp())
		}
		return "[" + strings.Join(parts, ",") + sp() + "]"
	}
}

// TestSplitLikeUnmarshal: Object and Array give what
// json.Unmarshal gives into a map or a slice of json.RawMessage, for
// objects, arrays and the other values (not an object, not an array),
// white space and escapes included.
func TestSplitLikeUnmarshal(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	docs := []string{`{}`, ` { } `, `[]`, `[ ]`, `{"a":1}`, `{"a":1,"a":2}`, `{"messages":[{"userId":1,"title":"t"},{"userId":"x"}],"z":null}`,
		`[1,"2",{"3":[4]},[[]],true]`, `null`, `"s"`, `12`, "\t{\"a\" :\n[ 1 , 2 ]\r}\n"}
	for range 3000 {
		docs = append(docs, randomJSON(r, 3))
	}
	for _, doc := range docs {
		if !json.Valid([]byte(doc)) {
			t.Fatalf("the generator made invalid JSON: %s", doc)
		}
		var wantM map[string]json.RawMessage
		errM := json.Unmarshal([]byte(doc), &wantM)
		gotM := map[string]json.RawMessage{} // the members as json.Unmarshal keeps them: the last of a name sent twice
		okM := Object([]byte(doc), func(name string, value json.RawMessage) { gotM[name] = value })
		if !okM {
			gotM = nil
		}
		if wantObject := errM == nil && wantM != nil; okM != wantObject || okM && !reflect.DeepEqual(gotM, wantM) {
			t.Errorf("object %s: got %q (%v), want %q (%v)", doc, gotM, okM, wantM, errM)
		}
		var wantA []json.RawMessage
		errA := json.Unmarshal([]byte(doc), &wantA)
		gotA, okA := Array([]byte(doc))
		if wantArray := errA == nil && wantA != nil; okA != wantArray || okA && !reflect.DeepEqual(gotA, wantA) {
			t.Errorf("array %s: got %q (%v), want %q (%v)", doc, gotA, okA, wantA, errA)
		}
	}
}

// FuzzObject holds Object and String to encoding/json: for every valid
// JSON value, the same members (values byte for byte, the last of a
// repeated name) or the same refusal of a value that is no object, and
// each member's text when it is a string.
func FuzzObject(f *testing.F) {
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
		got := map[string]json.RawMessage{}
		ok := Object(raw, func(name string, value json.RawMessage) { got[name] = value })
		if isObject := wantErr == nil && want != nil; ok != isObject {
			t.Fatalf("Object(%q) ok = %v, encoding/json: %v %v", raw, ok, want, wantErr)
		}
		if !ok {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Object(%q) = %q, encoding/json %q", raw, got, want)
		}
		for k, v := range got {
			var s string
			wantOK := json.Unmarshal(v, &s) == nil && v[0] == '"'
			if gs, gotOK := String(v); gotOK != wantOK || gs != s {
				t.Fatalf("String(%q) = %q %v, encoding/json %q %v (member %q)", v, gs, gotOK, s, wantOK, k)
			}
		}
	})
}
