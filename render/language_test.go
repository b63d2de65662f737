package render_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/render"
)

func TestWellFormedTag(t *testing.T) {
	t.Parallel()
	for _, tag := range []string{
		"ko", "KO", "ko-KR", "ko-kr", "en", "eng", "en-US", "zh-Hant", "zh-Hant-TW", "zh-hant-tw", "sr-Latn-RS", "es-419",
		"de-CH-1901", "sl-rozaj-biske", "zh-yue", "zh-yue-HK", "ar-EG-u-nu-latn", "en-US-u-ca-gregory-x-test", "en-x-a",
		"de-DE-u-co-phonebk-t-en", "abcde", "hy-Latn-IT-arevela", "sl-IT-nedis", "en-a-bbb-x-a-ccc",
	} {
		if !render.WellFormedTag(tag) {
			t.Errorf("WellFormedTag(%q): got false, want true", tag)
		}
	}
	for _, tag := range []string{
		"", "k", "ko_KR", "ko-", "-ko", "ko--KR", "1a", "abcd", "abcdefghi", "ko-K", "ko-KRR1", "en-US-US",
		"de-1901-1901", "en-u", "en-u-a", "en-u-nu-latn-u-ca-buddhist", "en-x", "x-private", "i-klingon",
		"ko KR", "ko-KR!", "한국어", "zh-Hant-TW-Hant", "en-ab-cd", "en-a-b", "en-US-x-",
	} {
		if render.WellFormedTag(tag) {
			t.Errorf("WellFormedTag(%q): got true, want false", tag)
		}
	}
}

// localizedJSON writes n entries named l0, l1 … (well-formed: 5 letters
// padded) as a localized member.
func localizedJSON(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"en-%03d":{"title":"t","content":"c"}`, 100+i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestParseLocalized(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("가", 11)
	for _, tc := range []struct {
		name, raw string
		want      []herald.Detail
	}{
		{"NotObject", `["ko"]`, []herald.Detail{{Field: "localized", Reason: "must be an object"}}},
		{"String", `"ko"`, []herald.Detail{{Field: "localized", Reason: "must be an object"}}},
		{"Malformed", `{"ko":`, []herald.Detail{{Field: "localized", Reason: "must be an object"}}},
		{"Trailing", `{} {}`, []herald.Detail{{Field: "localized", Reason: "must be an object"}}},
		{"InvalidUTF8", "{\"ko\":{\"title\":\"\xff\",\"content\":\"c\"}}", []herald.Detail{{Field: "localized", Reason: herald.ReasonInvalidUTF8}}},
		{"TooMany", localizedJSON(31), []herald.Detail{{Field: "localized", Reason: "must have at most 30 entries"}}},
		{"BadTag", `{"ko_KR":{"title":"t","content":"c"}}`, []herald.Detail{{Field: "localized.ko_KR", Reason: "must be a BCP 47 language tag, such as ko, ko-KR or zh-Hant-TW"}}},
		{"EmptyTag", `{"":{"title":"t","content":"c"}}`, []herald.Detail{{Field: `localized.""`, Reason: "must be a BCP 47 language tag, such as ko, ko-KR or zh-Hant-TW"}}},
		{"TagTooLong", `{"en-` + strings.Repeat("abcdefgh-", 4) + `x":{"title":"t","content":"c"}}`,
			[]herald.Detail{{Field: "localized.en-" + strings.Repeat("abcdefgh-", 4) + "x", Reason: "is not a language tag of at most 35 characters"}}},
		{"SameTagButCase", `{"ko-KR":{"title":"t","content":"c"},"ko-kr":{"title":"t","content":"c"}}`,
			[]herald.Detail{{Field: "localized.ko-kr", Reason: "names the language of localized.ko-KR again"}}},
		{"EntryNotObject", `{"ko":"안녕"}`, []herald.Detail{{Field: "localized.ko", Reason: "must be an object"}}},
		{"EntryNull", `{"ko":null}`, []herald.Detail{{Field: "localized.ko", Reason: "must be an object"}}},
		{"Unknown", `{"ko":{"title":"t","content":"c","linkURL":"x"}}`, []herald.Detail{{Field: "localized.ko.linkURL", Reason: "unknown field"}}},
		{"Missing", `{"ko":{}}`, []herald.Detail{
			{Field: "localized.ko.title", Reason: "is required"}, {Field: "localized.ko.content", Reason: "is required"}}},
		{"NotString", `{"ko":{"title":1,"content":null}}`, []herald.Detail{
			{Field: "localized.ko.title", Reason: "must be a string"}, {Field: "localized.ko.content", Reason: "must be a string"}}},
		{"Blank", `{"ko":{"title":"  ","content":"c"}}`, []herald.Detail{{Field: "localized.ko.title", Reason: "must not be empty"}}},
		{"Twice", `{"ko":{"title":"a","title":"b","content":"c"}}`, []herald.Detail{{Field: "localized.ko.title", Reason: "appears twice"}}},
		{"TitleTooLong", `{"ko":{"title":"` + long + `","content":"c"}}`, []herald.Detail{{Field: "localized.ko.title", Reason: "must be at most 10 characters"}}},
		{"ContentTooLong", `{"ko":{"title":"t","content":"` + long + long + `"}}`, []herald.Detail{{Field: "localized.ko.content", Reason: "must be at most 20 characters"}}},
		{"BadTemplate", `{"en":{"title":"ok","content":"c"},"ko":{"title":"t","content":"{{name}}"}}`, []herald.Detail{{Field: "localized.ko.content",
			Reason: `at character 1, {{name}} is not a placeholder: use {{userId}}, {{tag.NAME}} or {{tag.NAME | "default"}}`}}},
		{"EveryProblem", `{"x":{"title":"t","content":"c"},"ja":{"title":"}}","content":"c","body":""}}`, []herald.Detail{
			{Field: "localized.x", Reason: "must be a BCP 47 language tag, such as ko, ko-KR or zh-Hant-TW"},
			{Field: "localized.ja.title", Reason: `at character 1, "}}" closes no "{{" (a text cannot hold a literal "}}")`},
			{Field: "localized.ja.body", Reason: "unknown field"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, got := render.ParseLocalized(json.RawMessage(tc.raw), "localized", 10, 20)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if l != nil {
				t.Errorf("got entries %v with problems, want none", l)
			}
		})
	}
}

func TestParseLocalizedOK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw string
		want      render.Localized
	}{
		{"Absent", ``, nil},
		{"Null", ` null `, nil},
		{"Empty", `{}`, nil},
		{"Thirty", localizedJSON(30), nil},
		{"KeysAsGiven", `{"ko-KR":{"title":"안녕 {{tag.name | \"고객\"}}","content":"{{userId}}"}, "EN":{"content":"c","title":"t"}}`,
			render.Localized{"ko-KR": {Title: `안녕 {{tag.name | "고객"}}`, Content: "{{userId}}"}, "EN": {Title: "t", Content: "c"}}},
		{"LimitsInRunes", `{"ko":{"title":"` + strings.Repeat("가", 40) + `","content":"c"}}`,
			render.Localized{"ko": {Title: strings.Repeat("가", 40), Content: "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, details := render.ParseLocalized(json.RawMessage(tc.raw), "localized", 40, 40)
			if details != nil {
				t.Fatalf("got %v, want no problem", details)
			}
			if tc.name == "Thirty" {
				if len(l) != 30 {
					t.Errorf("got %d entries, want 30", len(l))
				}
				return
			}
			if len(l) != len(tc.want) {
				t.Fatalf("got %v, want %v", l, tc.want)
			}
			for k, e := range tc.want {
				if l[k] != e {
					t.Errorf("entry %s: got %+v, want %+v", k, l[k], e)
				}
			}
		})
	}
	if _, d := render.ParseLocalized(json.RawMessage(`{"ko":{"title":"`+strings.Repeat("가", 500)+`","content":"c"}}`), "localized", 0, 0); d != nil {
		t.Errorf("no limits: got %v, want none", d)
	}
}

func TestPick(t *testing.T) {
	t.Parallel()
	l := render.Localized{}
	for _, k := range []string{"ko", "EN-us", "en-GB", "zh-Hans", "zh-Hant-HK", "pt-PT", "pt-AO", "sr-Latn", "de-CH-1901"} {
		l[k] = render.Entry{Title: k, Content: k}
	}
	for _, tc := range []struct {
		locale, want string // want "" for no entry
	}{
		{"ko", "ko"},
		{"KO", "ko"},
		{"ko-KR", "ko"},              // its language
		{"ko-Kore-KR", "ko"},         // cut twice
		{"en-US", "EN-us"},           // exact, without regard to case
		{"en-us-u-nu-latn", "EN-us"}, // an extension cut with its singleton
		{"en", "EN-us"},              // the language's entries: a tie, the first key in byte order
		{"en-AU", "EN-us"},           // likewise
		{"en-GB-oxendict", "en-GB"},
		{"zh-Hant-TW", "zh-Hant-HK"}, // shares zh-Hant, before zh-Hans
		{"zh-Hans-CN", "zh-Hans"},
		{"zh", "zh-Hans"},
		{"pt-BR", "pt-AO"}, // a tie: byte order
		{"sr-Cyrl-RS", "sr-Latn"},
		{"de-CH-1901", "de-CH-1901"},
		{"de-CH", "de-CH-1901"},
		{"de", "de-CH-1901"},
		{"ja-JP", ""},
		{"", ""},
		{"k", ""},
		{"kor", ""},   // another language, though "ko" is its prefix
		{"ko_KR", ""}, // not a tag: no cut at _
		{"zh-" + strings.Repeat("x", 70), "zh-Hans"}, // longer than the stack buffer
	} {
		e, ok := render.Pick(l, tc.locale)
		if got := e.Title; ok != (tc.want != "") || got != tc.want {
			t.Errorf("Pick(%q): got %q %v, want %q", tc.locale, got, ok, tc.want)
		}
	}
	if _, ok := render.Pick(nil, "ko"); ok {
		t.Errorf("Pick(nil): got an entry, want none")
	}
}
