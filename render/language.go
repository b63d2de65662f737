package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// Limits of a push's localized entries (DESIGN section 13).
const (
	// MaxLocalized bounds the entries of one push.
	MaxLocalized = 30
	// MaxLanguageTag bounds an entry's key, as the SDK bounds a device's
	// locale: a longer key could match no device exactly.
	MaxLanguageTag = 35
)

// Entry is one language's title and content; both are templates.
type Entry struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// Localized is a push's entries by BCP 47 language tag, the keys kept as
// the request gave them and matched without regard to case (see Pick).
type Localized map[string]Entry

// Entries lists the entries as a push keeps them, by language tag.
func (l Localized) Entries() []herald.LocalizedEntry {
	out := make([]herald.LocalizedEntry, 0, len(l))
	for lang, e := range l {
		out = append(out, herald.LocalizedEntry{Lang: lang, Title: e.Title, Content: e.Content})
	}
	slices.SortFunc(out, func(a, b herald.LocalizedEntry) int { return strings.Compare(a.Lang, b.Lang) })
	return out
}

// ParseLocalized reads the localized member at path (usually "localized"):
// an object of at most MaxLocalized members, each named by a well-formed
// BCP 47 tag of at most MaxLanguageTag characters (see WellFormedTag), no
// two the same tag but for case, each an object of exactly a title and a
// content: non-empty strings of at most maxTitle and maxContent characters
// (Unicode code points; 0 for no limit) that compile as templates. Every
// problem is a detail naming its member, such as "localized.ko.title";
// with any, the Localized is nil. An absent or null member reads as none.
//
// The body is expected to have passed package request's TextProblems,
// which refuses lone surrogate escapes and duplicate names in the whole
// body; ParseLocalized refuses invalid UTF-8 and duplicates itself too.
func ParseLocalized(raw json.RawMessage, path string, maxTitle, maxContent int) (Localized, []herald.Detail) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if !utf8.Valid(raw) {
		return nil, []herald.Detail{detail(path, herald.ReasonInvalidUTF8)}
	}
	members, ok := objectMembers(raw)
	if !ok {
		return nil, []herald.Detail{detail(path, reasonNotObject)}
	}
	if len(members) > MaxLocalized {
		return nil, []herald.Detail{detail(path, fmt.Sprintf("must have at most %d entries", MaxLocalized))}
	}
	var details []herald.Detail
	l := make(Localized, len(members))
	seen := make(map[string]string, len(members)) // lower-case key → key as given
	for _, m := range members {
		field := path + "." + m.name
		if m.name == "" {
			field = path + `.""`
		}
		lower := asciiLower(m.name)
		switch prev, dup := seen[lower]; {
		case len(m.name) > MaxLanguageTag:
			details = append(details, detail(field, fmt.Sprintf("is not a language tag of at most %d characters", MaxLanguageTag)))
			continue
		case !WellFormedTag(m.name):
			details = append(details, detail(field, reasonBadTag))
			continue
		case dup:
			details = append(details, detail(field, fmt.Sprintf("names the language of %s.%s again", path, prev)))
			continue
		}
		seen[lower] = m.name
		e, ds := parseEntry(m.value, field, maxTitle, maxContent)
		details = append(details, ds...)
		l[m.name] = e
	}
	if len(details) > 0 {
		return nil, details
	}
	if len(l) == 0 {
		return nil, nil
	}
	return l, nil
}

// parseEntry reads one {title, content} object at field.
func parseEntry(raw json.RawMessage, field string, maxTitle, maxContent int) (Entry, []herald.Detail) {
	members, ok := objectMembers(raw)
	if !ok {
		return Entry{}, []herald.Detail{detail(field, reasonNotObject)}
	}
	var e Entry
	var details []herald.Detail
	found := map[string]bool{}
	for _, m := range members {
		var dst *string
		max := 0
		switch m.name {
		case "title":
			dst, max = &e.Title, maxTitle
		case "content":
			dst, max = &e.Content, maxContent
		default:
			details = append(details, detail(field+"."+m.name, reasonUnknownField))
			continue
		}
		name := field + "." + m.name
		if found[m.name] {
			details = append(details, detail(name, "appears twice"))
			continue
		}
		found[m.name] = true
		s, reason := entryText(m.value, max)
		if reason != "" {
			details = append(details, detail(name, reason))
			continue
		}
		details = append(details, Check(s, name)...)
		*dst = s
	}
	for _, name := range []string{"title", "content"} {
		if !found[name] {
			details = append(details, detail(field+"."+name, reasonRequired))
		}
	}
	return e, details
}

// entryText reads a title or content: a non-empty string of at most max
// characters (0 for no limit), or why not.
func entryText(raw json.RawMessage, max int) (string, string) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", reasonNotString
	}
	if strings.TrimSpace(s) == "" {
		return "", reasonEmpty
	}
	if max > 0 && utf8.RuneCountInString(s) > max {
		return "", fmt.Sprintf("must be at most %d characters", max)
	}
	return s, ""
}

// member is one name and value of a JSON object, in the order given.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members; ok is false when
// raw is not exactly one well-formed object.
func objectMembers(raw json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{name: name, value: v})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return ms, true
}

// WellFormedTag reports whether tag is a well-formed BCP 47 language tag
// (RFC 5646 section 2.1), in any case:
//
//	language   2–3 letters, then up to three extlangs of 3 letters; or 5–8 letters
//	script     4 letters                    (optional)
//	region     2 letters or 3 digits        (optional)
//	variant    5–8 letters and digits, or a digit and 3 more (any number, none twice)
//	extension  a singleton other than x, then subtags of 2–8 letters and digits
//	           (any number, no singleton twice)
//	privateuse x, then subtags of 1–8 letters and digits (last)
//
// It judges form only, as the RFC's "well-formed" does, not whether a
// subtag is registered; the irregular grandfathered tags (i-klingon …)
// and a tag of private use alone (x-…) are refused.
func WellFormedTag(tag string) bool {
	subs := strings.Split(tag, "-")
	for _, s := range subs {
		if len(s) == 0 || len(s) > 8 || !alnum(s) {
			return false
		}
	}
	i := 0
	lang := subs[0]
	switch {
	case alpha(lang) && len(lang) <= 3 && len(lang) >= 2:
		i = 1
		for n := 0; n < 3 && i < len(subs) && len(subs[i]) == 3 && alpha(subs[i]); n++ {
			i++
		}
	case alpha(lang) && len(lang) >= 5:
		i = 1
	default:
		return false
	}
	if i < len(subs) && len(subs[i]) == 4 && alpha(subs[i]) {
		i++ // script
	}
	if i < len(subs) && (len(subs[i]) == 2 && alpha(subs[i]) || len(subs[i]) == 3 && digits(subs[i])) {
		i++ // region
	}
	var variants []string
	for ; i < len(subs) && isVariant(subs[i]); i++ {
		v := asciiLower(subs[i])
		if slices.Contains(variants, v) {
			return false
		}
		variants = append(variants, v)
	}
	return extensions(subs[i:])
}

// extensions judges the extensions and private use that end a tag.
func extensions(subs []string) bool {
	var singletons []byte
	for i := 0; i < len(subs); {
		if len(subs[i]) != 1 {
			return false
		}
		c := asciiLower(subs[i])[0]
		min := 2
		if c == 'x' {
			min = 1
		} else if bytes.IndexByte(singletons, c) >= 0 {
			return false
		}
		singletons = append(singletons, c)
		n := 0
		for i++; i < len(subs) && len(subs[i]) >= min; i++ {
			n++ // private use takes every subtag left; an extension stops at a singleton
		}
		if n == 0 {
			return false
		}
	}
	return true
}

func isVariant(s string) bool {
	return len(s) >= 5 || len(s) == 4 && '0' <= s[0] && s[0] <= '9'
}

func alpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9') && !alpha(s[i:i+1]) {
			return false
		}
	}
	return true
}

// asciiLower lowers A–Z only: language tags are ASCII, and a key that is
// not stays distinct from every locale.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Pick returns the entry of l a device of locale gets, trying in order:
//
//  1. the entry whose key is locale, without regard to case;
//  2. the keys locale's subtags make when cut one at a time from the end
//     (zh-Hant-TW: zh-Hant, then zh), a singleton left last cut with its
//     subtag (en-US-u-nu: en-US, not en-US-u);
//  3. among the entries of locale's language (the same first subtag: ko-KR
//     for ko, pt-PT for pt-BR), the one sharing the most leading subtags
//     with locale (zh-Hant-HK before zh-Hans for zh-Hant-TW), the first in
//     the byte order of keys on a tie.
//
// ok is false when none matches (or locale is empty): the device gets the
// push's default title and content. Pick builds an index each call; the
// send path asks a Message, which builds it once.
func Pick(l Localized, locale string) (Entry, bool) {
	x := newIndex(l)
	if i := x.choose(locale); i >= 0 {
		return l[x.keys[i]], true
	}
	return Entry{}, false
}

// index is what choosing needs of a Localized: its keys in byte order,
// their lower-case forms, and the position of each lower-case form (the
// first key of that form, should a Localized built in Go hold two).
type index struct {
	keys  []string
	lower []string
	pos   map[string]int
	// byLanguage lists the positions of each first subtag's keys, so that
	// a device of a language no entry has costs no scan.
	byLanguage map[string][]int
}

func newIndex(l Localized) index {
	x := index{keys: make([]string, 0, len(l)), pos: make(map[string]int, len(l)), byLanguage: make(map[string][]int)}
	for k := range l {
		x.keys = append(x.keys, k)
	}
	slices.Sort(x.keys)
	x.lower = make([]string, len(x.keys))
	for i, k := range x.keys {
		x.lower[i] = asciiLower(k)
		if _, dup := x.pos[x.lower[i]]; !dup {
			x.pos[x.lower[i]] = i
		}
		lang, _, _ := strings.Cut(x.lower[i], "-")
		x.byLanguage[lang] = append(x.byLanguage[lang], i)
	}
	return x
}

// choose returns the position in keys of the entry a device of locale
// gets (see Pick), or -1. It does not allocate for a locale of up to 64
// bytes.
func (x index) choose(locale string) int {
	if locale == "" || len(x.keys) == 0 {
		return -1
	}
	var buf [64]byte
	var b []byte
	if len(locale) <= len(buf) {
		b = buf[:len(locale)]
		for i := 0; i < len(locale); i++ {
			c := locale[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b[i] = c
		}
	} else {
		b = []byte(asciiLower(locale))
	}
	loc := b
	for {
		if i, ok := x.pos[string(b)]; ok {
			return i
		}
		cut := bytes.LastIndexByte(b, '-')
		if cut < 0 {
			break
		}
		b = b[:cut]
		if c := bytes.LastIndexByte(b, '-'); c >= 0 && len(b)-c == 2 {
			b = b[:c]
		}
	}
	return x.sameLanguage(loc)
}

// sameLanguage returns the position of the entry of loc's language sharing
// the most leading subtags with loc (lower-case), or -1.
func (x index) sameLanguage(loc []byte) int {
	primary := loc
	if k := bytes.IndexByte(loc, '-'); k >= 0 {
		primary = loc[:k]
	}
	best, bestScore := -1, 0
	for _, i := range x.byLanguage[string(primary)] {
		if s := commonSubtags(x.lower[i], loc); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// commonSubtags counts the leading subtags key and loc share.
func commonSubtags(key string, loc []byte) int {
	n := 0
	for {
		k, l := strings.IndexByte(key, '-'), bytes.IndexByte(loc, '-')
		ks, ls := key, loc
		if k >= 0 {
			ks = key[:k]
		}
		if l >= 0 {
			ls = loc[:l]
		}
		if ks != string(ls) {
			return n
		}
		n++
		if k < 0 || l < 0 {
			return n
		}
		key, loc = key[k+1:], loc[l+1:]
	}
}
