package audience

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// nest wraps leaf in depth-1 nots.
func nest(leaf string, depth int) string {
	for range depth - 1 {
		leaf = `{"not":` + leaf + `}`
	}
	return leaf
}

// leaves returns an and of n tag leaves.
func leaves(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"tag":"t","eq":1}`
	}
	return `{"and":[` + strings.Join(items, ",") + `]}`
}

// values returns a JSON array of n numbers.
func values(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = "1"
	}
	return "[" + strings.Join(items, ",") + "]"
}

func TestParseRefuses(t *testing.T) {
	long := strings.Repeat("é", MaxTagValue+1)
	for _, tc := range []struct {
		name, in, field string
	}{
		{"NotAnObject", `[1]`, "filter"},
		{"Null", `null`, "filter"},
		{"Trailing", `{"tag":"t","eq":1} {}`, "filter"},
		{"InvalidUTF8", "{\"tag\":\"t\",\"eq\":\"\xff\"}", "filter"},
		{"EmptyAnd", `{"and":[]}`, "filter.and"},
		{"OrNotArray", `{"or":{"tag":"t","eq":1}}`, "filter.or"},
		{"NotArray", `{"not":[{"tag":"t","eq":1}]}`, "filter.not"},
		{"BesideAnd", `{"and":[{"tag":"t","eq":1}],"x":1}`, "filter.x"},
		{"AndBesideOr", `{"and":[{"tag":"t","eq":1}],"or":[{"tag":"t","eq":1}]}`, "filter.or"},
		{"DeepPath", `{"and":[{"tag":"t","eq":1},{"or":[{"tag":"t","eq":{}}]}]}`, "filter.and[1].or[0].eq"},
		{"NoOp", `{"tag":"t"}`, "filter"},
		{"TwoOps", `{"tag":"t","eq":1,"ne":2}`, "filter"},
		{"Duplicate", `{"tag":"t","eq":1,"eq":2}`, "filter.eq"},
		{"UnknownMember", `{"tag":"t","eq":1,"why":2}`, "filter.why"},
		{"TagAndField", `{"tag":"t","field":"locale","eq":"ko"}`, "filter"},
		{"NeitherTagNorField", `{"eq":1}`, "filter"},
		{"BadTagName", `{"not":{"tag":"a b","eq":1}}`, "filter.not.tag"},
		{"LongTagName", `{"tag":"` + strings.Repeat("a", 65) + `","eq":1}`, "filter.tag"},
		{"TagNotString", `{"tag":5,"eq":1}`, "filter.tag"},
		{"UnknownField", `{"field":"color","eq":"red"}`, "filter.field"},
		{"TagEqNull", `{"tag":"t","eq":null}`, "filter.eq"},
		{"TagEqObject", `{"tag":"t","eq":{"a":1}}`, "filter.eq"},
		{"TagEqLong", `{"tag":"t","eq":"` + long + `"}`, "filter.eq"},
		{"TagEqNUL", `{"tag":"t","eq":"a\u0000"}`, "filter.eq"},
		{"TagEqHuge", `{"tag":"t","eq":1e400}`, "filter.eq"},
		{"TagInEmpty", `{"tag":"t","in":[]}`, "filter.in"},
		{"TagInTooMany", `{"tag":"t","in":` + values(MaxIn+1) + `}`, "filter.in"},
		{"TagInNotArray", `{"tag":"t","in":1}`, "filter.in"},
		{"TagInBadItem", `{"tag":"t","in":[1,"a",null]}`, "filter.in[2]"},
		{"TagExistsString", `{"tag":"t","exists":"yes"}`, "filter.exists"},
		{"TagGtBool", `{"tag":"t","gt":true}`, "filter.gt"},
		{"TagPrefixNumber", `{"tag":"t","prefix":1}`, "filter.prefix"},
		{"PlatformUnknown", `{"field":"platform","eq":"windows"}`, "filter.eq"},
		{"PlatformInUnknown", `{"field":"platform","in":["ios","mac"]}`, "filter.in[1]"},
		{"PlatformPrefix", `{"field":"platform","prefix":"a"}`, "filter.prefix"},
		{"PlatformExists", `{"field":"platform","exists":true}`, "filter.exists"},
		{"LocaleEmpty", `{"field":"locale","eq":""}`, "filter.eq"},
		{"LocaleNumber", `{"field":"locale","eq":5}`, "filter.eq"},
		{"LocaleGt", `{"field":"locale","gt":"a"}`, "filter.gt"},
		{"TimeZoneExistsString", `{"field":"timeZone","exists":"x"}`, "filter.exists"},
		{"VersionGtUnreadable", `{"field":"appSourceVersion","gt":"1.2"}`, "filter.gt"},
		{"VersionGtNumber", `{"field":"appSourceVersion","gte":1.2}`, "filter.gte"},
		{"VersionExists", `{"field":"appSourceVersion","exists":true}`, "filter.exists"},
		{"MarketingString", `{"field":"marketing","eq":"true"}`, "filter.eq"},
		{"MarketingIn", `{"field":"marketingNight","in":[true]}`, "filter.in"},
		{"DaysFraction", `{"field":"lastSeenDays","lte":1.5}`, "filter.lte"},
		{"DaysNegative", `{"field":"lastSeenDays","gt":-1}`, "filter.gt"},
		{"DaysTooMany", `{"field":"lastSeenDays","gt":100001}`, "filter.gt"},
		{"DaysPrefix", `{"field":"lastSeenDays","prefix":"1"}`, "filter.prefix"},
		{"CreatedAtBadDate", `{"field":"createdAt","gt":"2025-13-01"}`, "filter.gt"},
		{"CreatedAtNumber", `{"field":"createdAt","gt":1700000000000}`, "filter.gt"},
		{"CreatedAtIn", `{"field":"createdAt","in":["2025-01-01"]}`, "filter.in"},
		{"TooDeep", nest(`{"tag":"t","eq":1}`, MaxDepth+1), "filter.not.not.not.not.not"},
		{"TooManyLeaves", leaves(MaxLeaves + 1), "filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, details := Parse(json.RawMessage(tc.in))
			if len(details) == 0 {
				got, _ := json.Marshal(f)
				t.Fatalf("got %s accepted, want a detail at %s", got, tc.field)
			}
			if details[0].Field != tc.field || details[0].Reason == "" {
				t.Errorf("got %+v, want a detail at %s", details, tc.field)
			}
		})
	}
}

func TestParseAllDetails(t *testing.T) {
	_, details := Parse(json.RawMessage(`{"or":[{"tag":"","eq":1},{"field":"locale","gt":1},{"tag":"ok","eq":1}]}`))
	want := []string{"filter.or[0].tag", "filter.or[1].gt"}
	var got []string
	for _, d := range details {
		got = append(got, d.Field)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseLimits(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		leaves   int
	}{
		{"MaxLeaves", leaves(MaxLeaves), MaxLeaves},
		{"MaxDepth", nest(`{"tag":"t","eq":1}`, MaxDepth), 1},
		{"MaxIn", `{"tag":"t","in":` + values(MaxIn) + `}`, 1},
		{"LongestValue", `{"tag":"t","eq":"` + strings.Repeat("한", MaxTagValue) + `"}`, 1},
		{"MaxDays", `{"field":"lastSeenDays","lte":100000}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, details := Parse(json.RawMessage(tc.in))
			if details != nil || f.Leaves() != tc.leaves {
				t.Errorf("got %d leaves and %v, want %d and none", f.Leaves(), details, tc.leaves)
			}
		})
	}
}

func TestParseCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{` { "eq" : 5, "tag" : "n" } `, `{"tag":"n","eq":5}`},
		{`{"tag":"n","eq":1.50}`, `{"tag":"n","eq":1.5}`},
		{`{"tag":"n","eq":-0.0}`, `{"tag":"n","eq":-0}`},
		{`{"tag":"n","ne":"5"}`, `{"tag":"n","ne":"5"}`},
		{`{"tag":"n","in":["a",2,false]}`, `{"tag":"n","in":["a",2,false]}`},
		{`{"field":"createdAt","gte":"2025-06-01"}`, `{"field":"createdAt","gte":"2025-06-01T00:00:00Z"}`},
		{`{"field":"createdAt","lt":"2025-06-01T09:00:00.1234567+09:00"}`, `{"field":"createdAt","lt":"2025-06-01T00:00:00.123Z"}`},
		{`{"not":{"and":[{"field":"platform","in":["ios","web"]},{"or":[{"field":"marketing","eq":true}]}]}}`,
			`{"not":{"and":[{"field":"platform","in":["ios","web"]},{"or":[{"field":"marketing","eq":true}]}]}}`},
	} {
		f, details := Parse(json.RawMessage(tc.in))
		if details != nil {
			t.Errorf("%s: got %v", tc.in, details)
			continue
		}
		got, err := json.Marshal(f)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s (%v), want %s", tc.in, got, err, tc.want)
		}
		var again Filter
		if err := json.Unmarshal(got, &again); err != nil {
			t.Errorf("%s: read back: %v", got, err)
		} else if back, _ := json.Marshal(again); string(back) != tc.want {
			t.Errorf("%s: read back as %s", got, back)
		}
	}
}

func TestParseTagUpdate(t *testing.T) {
	got, details := ParseTagUpdate(json.RawMessage(`{"plan":"gold","age":31,"vip":true,"old":null}`), "tags")
	if details != nil {
		t.Fatalf("got %v", details)
	}
	if len(got) != 4 || got["old"] != nil || !got["plan"].Equal(String("gold")) || !got["age"].Equal(Number(31)) || !got["vip"].Equal(Bool(true)) {
		t.Errorf("got %v", got)
	}
	many := map[string]int{}
	for i := range MaxTags + 1 {
		many["t"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = i
	}
	manyJSON, _ := json.Marshal(many)
	for _, tc := range []struct {
		name, in string
		want     []herald.Detail
	}{
		{"NotObject", `[1]`, []herald.Detail{{Field: "tags"}}},
		{"Null", `null`, []herald.Detail{{Field: "tags"}}},
		{"TooMany", string(manyJSON), []herald.Detail{{Field: "tags"}}},
		{"Each", `{"b c":1,"ok":1,"deep":{"x":1},"long":"` + strings.Repeat("a", 256) + `","list":[1]}`,
			[]herald.Detail{{Field: "tags.b c"}, {Field: "tags.deep"}, {Field: "tags.list"}, {Field: "tags.long"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, details := ParseTagUpdate(json.RawMessage(tc.in), "tags")
			if len(details) != len(tc.want) {
				t.Fatalf("got %v, want %v", details, tc.want)
			}
			for i, d := range details {
				if d.Field != tc.want[i].Field || d.Reason == "" {
					t.Errorf("detail %d: got %+v, want field %s", i, d, tc.want[i].Field)
				}
			}
		})
	}
}

func TestValidTagName(t *testing.T) {
	for name, want := range map[string]bool{"a": true, "A.b-c_9": true, strings.Repeat("z", 64): true,
		"": false, strings.Repeat("z", 65): false, "a b": false, "é": false, "a/b": false, "{{x}}": false} {
		if got := ValidTagName(name); got != want {
			t.Errorf("ValidTagName(%q): got %v, want %v", name, got, want)
		}
	}
}

func TestValueJSON(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		json string
		text string
	}{
		{String("ko"), `"ko"`, "ko"},
		{String(""), `""`, ""},
		{Number(2.5), `2.5`, "2.5"},
		{Number(1e21), `1e+21`, "1e+21"},
		{Number(-3), `-3`, "-3"},
		{Bool(false), `false`, "false"},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil || string(got) != tc.json || tc.v.Text() != tc.text {
			t.Errorf("%+v: got %s (%v) and text %q, want %s and %q", tc.v, got, err, tc.v.Text(), tc.json, tc.text)
		}
		var back Value
		if err := json.Unmarshal(got, &back); err != nil || !back.Equal(tc.v) {
			t.Errorf("%s: read back %+v (%v)", got, back, err)
		}
	}
	var v Value
	for _, bad := range []string{`null`, `[1]`, `{}`, `"` + strings.Repeat("a", 256) + `"`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s: got accepted as %+v", bad, v)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"tag":"a","eq":"x"}`, `{"and":[{"tag":"a","gt":1},{"not":{"field":"platform","in":["ios"]}}]}`,
		`{"or":[{"field":"createdAt","lt":"2025-01-01"},{"field":"lastSeenDays","gte":3}]}`,
		`{"field":"appSourceVersion","gte":"1.2.3"}`, `{"field":"locale","prefix":"ko"}`, `{"tag":"a","in":[1,"1",true]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		flt, details := Parse(json.RawMessage(in))
		if details != nil {
			for _, d := range details {
				if !strings.HasPrefix(d.Field, "filter") || d.Reason == "" {
					t.Fatalf("%s: detail %+v", in, d)
				}
			}
			return
		}
		out, err := json.Marshal(flt)
		if err != nil {
			t.Fatalf("%s: accepted, then %v", in, err)
		}
		again, details := Parse(out)
		if details != nil {
			t.Fatalf("%s: accepted, written %s, refused %v", in, out, details)
		}
		if back, _ := json.Marshal(again); string(back) != string(out) || again.Leaves() != flt.Leaves() {
			t.Fatalf("%s: written %s, read back as %s", in, out, back)
		}
	})
}
