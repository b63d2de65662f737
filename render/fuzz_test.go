package render_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldpush/herald/render"
)

// FuzzCompile: Compile never panics; it refuses a text with a
// *SyntaxError whose character lies within the text; a text without "{{"
// or "}}" is a static template rendering itself; a compiled template
// renders without panicking, and again the same for the same user.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"", "plain", "{{userId}}", "{{ tag.a | \"x\\\"y\" }}", "{{tag.a}}{{tag.b}}", "}}", "{{", "{{{userId}}}",
		`{{tag.a | "}}"}}`, "{{tag.a | \"\\", "안녕 {{tag.이름}}", "\xff{{userId}}", "{ }", "{{tag." + strings.Repeat("a", 64) + "}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tpl, err := render.Compile(text)
		if err != nil {
			var se *render.SyntaxError
			if !errors.As(err, &se) || se.Reason == "" || se.Char < 1 || se.Char > utf8.RuneCountInString(text)+1 {
				t.Fatalf("Compile(%q): got %#v, want a *SyntaxError within the text", text, err)
			}
			return
		}
		plain := !strings.Contains(text, "{{") && !strings.Contains(text, "}}")
		if plain && (!tpl.Static() || tpl.Render("u", nil) != text) {
			t.Fatalf("Compile(%q): got static %v rendering %q, want a static template of the text", text, tpl.Static(), tpl.Render("u", nil))
		}
		if tpl.Static() && !plain {
			t.Fatalf("Compile(%q): got a static template of a text with braces", text)
		}
		value := func(name string) (string, bool) { return "<" + name + ">", len(name)%2 == 0 }
		if a, b := tpl.Render("u-1", value), tpl.Render("u-1", value); a != b {
			t.Fatalf("Render(%q): got %q then %q", text, a, b)
		}
	})
}

// FuzzParseLocalized: ParseLocalized never panics, and returns entries or
// problems, never both.
func FuzzParseLocalized(f *testing.F) {
	for _, s := range []string{`{"ko":{"title":"t","content":"c"}}`, `{"x":1}`, `[]`, `{"ko":{"title":"{{"}}`, `null`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		l, details := render.ParseLocalized(raw, "localized", 50, 100)
		if l != nil && details != nil {
			t.Fatalf("ParseLocalized(%q): got entries and problems", raw)
		}
		for _, d := range details {
			if !strings.HasPrefix(d.Field, "localized") || d.Reason == "" {
				t.Fatalf("ParseLocalized(%q): detail %+v, want a field under localized and a reason", raw, d)
			}
		}
		if len(l) > render.MaxLocalized {
			t.Fatalf("ParseLocalized(%q): %d entries", raw, len(l))
		}
	})
}
