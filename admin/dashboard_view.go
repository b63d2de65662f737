package admin

import (
	"strings"
	"unicode/utf8"
)

// idRef is an ID as the "id" and "idfull" templates show it: with a link
// (Href) or an element id (Elem) when given.
type idRef struct{ ID, Href, Elem string }

// ref makes an idRef: ref ID [href [element id]].
func ref(id string, more ...string) idRef {
	r := idRef{ID: id}
	if len(more) > 0 {
		r.Href = more[0]
	}
	if len(more) > 1 {
		r.Elem = more[1]
	}
	return r
}

// shortKeep is how many trailing characters a shortened ID keeps: the
// random tail that tells IDs made in the same millisecond apart.
const shortKeep = 8

// shortID shortens an ID of ours to its prefix and last characters,
// "push_…a1b2c3d4"; a short ID (or one without a prefix) is kept whole.
func shortID(id string) string {
	prefix, rest, ok := strings.Cut(id, "_")
	if !ok || len(prefix) > 8 {
		prefix, rest = "", id
	} else {
		prefix += "_"
	}
	if utf8.RuneCountInString(rest) <= shortKeep+4 {
		return id
	}
	r := []rune(rest)
	return prefix + "…" + string(r[len(r)-shortKeep:])
}
