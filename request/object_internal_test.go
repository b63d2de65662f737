package request

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

// TestSplitLikeUnmarshal: splitObject and splitArray give what
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
		members, okM := splitObject([]byte(doc))
		var gotM map[string]json.RawMessage // the members as json.Unmarshal keeps them: the last of a name sent twice
		if okM {
			gotM = make(map[string]json.RawMessage, len(members))
			for _, m := range members {
				gotM[m.name] = m.value
			}
		}
		if wantObject := errM == nil && wantM != nil; okM != wantObject || okM && !reflect.DeepEqual(gotM, wantM) {
			t.Errorf("object %s: got %q (%v), want %q (%v)", doc, gotM, okM, wantM, errM)
		}
		var wantA []json.RawMessage
		errA := json.Unmarshal([]byte(doc), &wantA)
		gotA, okA := splitArray([]byte(doc))
		if wantArray := errA == nil && wantA != nil; okA != wantArray || okA && !reflect.DeepEqual(gotA, wantA) {
			t.Errorf("array %s: got %q (%v), want %q (%v)", doc, gotA, okA, wantA, errA)
		}
	}
}
