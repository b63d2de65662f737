package render

import (
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// MaxTagName bounds a tag's name, as DESIGN section 13 does.
const MaxTagName = 64

// Template is a compiled title or content text. The zero Template is the
// static empty text.
//
// Syntax: {{userId}} is the recipient's user id; {{tag.NAME}} the user's
// tag NAME (1–64 characters of a-z A-Z 0-9 _ . -), empty when the user has
// no such tag; {{tag.NAME | "default"}} the default instead of empty. Spaces
// and tabs are allowed inside the braces, around the name and the |. A
// default is written as a JSON string is, but only \" and \\ may follow a
// backslash: the text itself came out of a JSON string, so any other
// character (a newline included) is written as itself.
//
// A literal "{{" or "}}" cannot be written in the text: every "{{" opens a
// placeholder and every "}}" must close one, so that a typo is refused at
// accept rather than sent. Single braces are plain text, and a default may
// hold any braces ({{tag.x | "}}"}} renders "}}" for a user without x).
// Placeholders are read left to right: "{{{userId}}}" is refused, because
// its first "{{" opens "{{{userId}}" — write "{ {{userId}} }".
type Template struct {
	text  string
	parts []part // nil for a static template
	tags  []string
	lits  int // bytes of the literal parts
}

// partKind is what one part of a template renders.
type partKind uint8

const (
	partLiteral partKind = iota
	partUserID
	partTag
)

// part is a run of literal text, the user id or a tag (s its name, def its
// default).
type part struct {
	kind partKind
	s    string
	def  string
}

// Compile reads text as a template. The error is a *SyntaxError naming the
// first problem; Check turns it into the detail of a 400.
func Compile(text string) (Template, error) {
	if !HasPlaceholders(text) {
		return Template{text: text}, nil
	}
	if !utf8.ValidString(text) {
		return Template{}, &SyntaxError{Char: 1, Reason: herald.ReasonInvalidUTF8}
	}
	t := Template{text: text}
	lit := 0 // start of the literal run not yet added
	for i := 0; i+1 < len(text); {
		switch text[i : i+2] {
		case "}}":
			return Template{}, syntaxError(text, i, `"}}" closes no "{{" (a text cannot hold a literal "}}")`)
		case "{{":
			p, end, err := placeholder(text, i)
			if err != nil {
				return Template{}, err
			}
			t.literal(text[lit:i])
			t.add(p)
			i, lit = end, end
		default:
			i++
		}
	}
	t.literal(text[lit:])
	return t, nil
}

// HasPlaceholders reports whether text may hold a placeholder: whether
// it has "{{" or "}}" at all. A text without either renders as itself.
func HasPlaceholders(text string) bool {
	return strings.Contains(text, "{{") || strings.Contains(text, "}}")
}

// Check returns the problem of text as the detail of the member at path
// ("title", "localized.ko.content"), or nil when text compiles.
func Check(text, path string) []herald.Detail {
	if _, err := Compile(text); err != nil {
		return []herald.Detail{detail(path, err.(*SyntaxError).Reason)}
	}
	return nil
}

func (t *Template) literal(s string) {
	if s != "" {
		t.parts = append(t.parts, part{kind: partLiteral, s: s})
		t.lits += len(s)
	}
}

func (t *Template) add(p part) {
	t.parts = append(t.parts, p)
	if p.kind == partTag && !containsString(t.tags, p.s) {
		t.tags = append(t.tags, p.s)
	}
}

// placeholder reads the placeholder whose "{{" is at text[at:] and returns
// it with the offset just past its "}}".
func placeholder(text string, at int) (part, int, error) {
	i := skipSpace(text, at+2)
	start := i
	for i < len(text) && isNameByte(text[i]) {
		i++
	}
	word := text[start:i]
	i = skipSpace(text, i)
	var p part
	switch {
	case word == "userId":
		p.kind = partUserID
	case strings.HasPrefix(word, "tag."):
		p.kind, p.s = partTag, word[len("tag."):]
		// Anything but "}}" or | after the name is a character a name
		// cannot hold ({{tag.first name}}, {{tag.é}}).
		junk := !closes(text, i) && !strings.HasPrefix(text[i:], "|") && !opensOrEnds(text, i)
		if p.s == "" || len(p.s) > MaxTagName || junk {
			return part{}, 0, syntaxError(text, at, "%s has a bad tag name: a tag name is 1–%d characters of a-z, A-Z, 0-9, _, . and -",
				snippet(text, at), MaxTagName)
		}
	default:
		if opensOrEnds(text, i) && word == "" {
			break // reported below as an unclosed "{{"
		}
		hint := ""
		if strings.EqualFold(word, "userId") {
			hint = " (did you mean {{userId}}?)"
		}
		return part{}, 0, syntaxError(text, at, `%s is not a placeholder: use {{userId}}, {{tag.NAME}} or {{tag.NAME | "default"}}%s`,
			snippet(text, at), hint)
	}
	if i < len(text) && text[i] == '|' {
		if p.kind != partTag {
			return part{}, 0, syntaxError(text, at, "{{userId}} takes no default")
		}
		def, end, reason := quoted(text, skipSpace(text, i+1))
		if reason != "" {
			return part{}, 0, syntaxError(text, at, "the default of {{tag.%s}} %s", p.s, reason)
		}
		p.def, i = def, skipSpace(text, end)
		if !closes(text, i) {
			if opensOrEnds(text, i) {
				return part{}, 0, syntaxError(text, at, `"{{" is not closed by "}}" (a text cannot hold a literal "{{")`)
			}
			return part{}, 0, syntaxError(text, at, `the default of {{tag.%s}} must be followed by "}}"`, p.s)
		}
		return p, i + 2, nil
	}
	if closes(text, i) {
		return p, i + 2, nil
	}
	if opensOrEnds(text, i) {
		return part{}, 0, syntaxError(text, at, `"{{" is not closed by "}}" (a text cannot hold a literal "{{")`)
	}
	return part{}, 0, syntaxError(text, at, `%s: expected "}}" or | "default" after the name`, snippet(text, at))
}

// quoted reads the double-quoted default at text[i:] and returns its value
// and the offset past its closing quote, or why it is not one.
func quoted(text string, i int) (string, int, string) {
	if i >= len(text) || text[i] != '"' {
		return "", 0, `must be a double-quoted string, such as "friend"`
	}
	var b strings.Builder
	run := i + 1 // start of the run not yet copied
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '"':
			if b.Len() == 0 { // no escape, or one at the start: a single run
				return text[run:j], j + 1, ""
			}
			b.WriteString(text[run:j])
			return b.String(), j + 1, ""
		case '\\':
			if j+1 >= len(text) || text[j+1] != '"' && text[j+1] != '\\' {
				return "", 0, `may escape only " and \ (as \" and \\)`
			}
			b.WriteString(text[run:j])
			j++
			run = j
		}
	}
	return "", 0, "lacks its closing quote"
}

// snippet quotes the placeholder at text[at:] for a reason: up to its "}}"
// or 40 bytes, cut at a character's boundary.
func snippet(text string, at int) string {
	end := len(text)
	if k := strings.Index(text[at+2:], "}}"); k >= 0 {
		end = at + 2 + k + 2
	}
	if end-at > 40 {
		end = at + 40
		for end > at && !utf8.RuneStart(text[end]) {
			end--
		}
		return text[at:end] + "…"
	}
	return text[at:end]
}

func skipSpace(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

func closes(text string, i int) bool { return strings.HasPrefix(text[i:], "}}") }

// opensOrEnds reports whether the text ends at i or a new "{{" starts
// there: the placeholder before it was never closed.
func opensOrEnds(text string, i int) bool { return i >= len(text) || strings.HasPrefix(text[i:], "{{") }

// isNameByte reports whether c may appear in a tag name (or "tag." and
// "userId", which are made of such bytes).
func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Static reports whether the template has no placeholder; Render then
// returns its text as given, without allocating.
func (t Template) Static() bool { return t.parts == nil }

// Text returns the template's text as it was compiled.
func (t Template) Text() string { return t.text }

// Tags returns the names of the tags the template reads, once each in the
// order they first appear, so that the sender loads only those. The slice
// is the caller's.
func (t Template) Tags() []string {
	if len(t.tags) == 0 {
		return nil
	}
	return append([]string(nil), t.tags...)
}

// maxStackValues is how many placeholder values Render keeps on the stack
// before it asks the heap.
const maxStackValues = 8

// Render returns the text for one user: userID in place of {{userId}} and
// the value tag gives for each {{tag.NAME}}, its default (or "") when tag
// reports none. Tag values are taken as already formatted (a number as
// audience.FormatNumber writes it, a boolean as true or false). tag may
// be nil when the template reads no tag. A dynamic template allocates its result once.
func (t Template) Render(userID string, tag func(name string) (string, bool)) string {
	if t.parts == nil {
		return t.text // small enough to inline: a static text costs a test
	}
	return t.render(userID, tag)
}

// render is Render of a template with placeholders: one pass for the
// values and the size, one to write them.
func (t *Template) render(userID string, tag func(name string) (string, bool)) string {
	var stack [maxStackValues]string
	values := stack[:0]
	size := t.lits
	for _, p := range t.parts {
		var v string
		switch p.kind {
		case partLiteral:
			continue
		case partUserID:
			v = userID
		case partTag:
			var ok bool
			if tag != nil {
				v, ok = tag(p.s)
			}
			if !ok {
				v = p.def
			}
		}
		values = append(values, v)
		size += len(v)
	}
	var b strings.Builder
	b.Grow(size)
	k := 0
	for _, p := range t.parts {
		if p.kind == partLiteral {
			b.WriteString(p.s)
			continue
		}
		b.WriteString(values[k])
		k++
	}
	return b.String()
}
