package render_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/render"
)

// tags is a user's tags as the sender hands them to Render.
func tags(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		// char is the character the reason names; want a part of the reason.
		char int
		want string
	}{
		{"UnclosedAtEnd", "hi {{userId", 4, `"{{" is not closed by "}}"`},
		{"UnclosedBare", "hi {{", 4, `"{{" is not closed by "}}"`},
		{"UnclosedBeforeNext", "{{tag.a {{userId}}", 1, `"{{" is not closed by "}}"`},
		{"UnclosedAfterDefault", `{{tag.a | "x"`, 1, `"{{" is not closed by "}}"`},
		{"StrayClose", "hi }} there", 4, `"}}" closes no "{{"`},
		{"StrayCloseAfterPlaceholder", "{{userId}}}}", 11, `"}}" closes no "{{"`},
		{"Empty", "{{}}", 1, `{{}} is not a placeholder`},
		{"Spaces", "{{   }}", 1, `{{   }} is not a placeholder`},
		{"Unknown", "a {{name}}", 3, `{{name}} is not a placeholder: use {{userId}}, {{tag.NAME}} or {{tag.NAME | "default"}}`},
		{"UserIDCase", "{{userid}}", 1, `did you mean {{userId}}?`},
		{"TagCase", "{{Tag.x}}", 1, `{{Tag.x}} is not a placeholder`},
		{"TripleBrace", "{{{userId}}}", 1, `{{{userId}} is not a placeholder`},
		{"UserIDJunk", "{{userId x}}", 1, `expected "}}" or | "default" after the name`},
		{"TagEmpty", "{{tag.}}", 1, `{{tag.}} has a bad tag name`},
		{"TagSpace", "{{tag.first name}}", 1, `{{tag.first name}} has a bad tag name`},
		{"TagUnicode", "{{tag.이름}}", 1, `has a bad tag name`},
		{"TagTooLong", "{{tag." + strings.Repeat("a", 65) + "}}", 1, `has a bad tag name: a tag name is 1–64 characters`},
		{"UserIDDefault", `{{userId | "x"}}`, 1, `{{userId}} takes no default`},
		{"DefaultUnquoted", `{{tag.a | x}}`, 1, `the default of {{tag.a}} must be a double-quoted string`},
		{"DefaultMissing", `{{tag.a |}}`, 1, `the default of {{tag.a}} must be a double-quoted string`},
		{"DefaultSingleQuotes", `{{tag.a | 'x'}}`, 1, `must be a double-quoted string`},
		{"DefaultBadEscape", `{{tag.a | "x\ny"}}`, 1, `may escape only " and \`},
		{"DefaultUnicodeEscape", `{{tag.a | "\u0041"}}`, 1, `may escape only " and \`},
		{"DefaultUnterminated", `{{tag.a | "x}}`, 1, `lacks its closing quote`},
		{"DefaultTrailingBackslash", `{{tag.a | "x\`, 1, `may escape only`},
		{"DefaultThenJunk", `{{tag.a | "x" y}}`, 1, `the default of {{tag.a}} must be followed by "}}"`},
		{"PositionInRunes", "안녕 {{x}}", 4, `{{x}} is not a placeholder`},
		{"InvalidUTF8", "a\xff {{userId}}", 1, herald.ReasonInvalidUTF8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := render.Compile(tc.text)
			var se *render.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q): got %v, want a *SyntaxError", tc.text, err)
			}
			if se.Char != tc.char || !strings.Contains(se.Reason, tc.want) {
				t.Errorf("Compile(%q): got character %d %q, want character %d and %q", tc.text, se.Char, se.Reason, tc.char, tc.want)
			}
			got := render.Check(tc.text, "localized.ko.content")
			want := []herald.Detail{{Field: "localized.ko.content", Reason: se.Reason}}
			if !slices.Equal(got, want) {
				t.Errorf("Check(%q): got %v, want %v", tc.text, got, want)
			}
		})
	}
}

func TestCheckOK(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"", "plain", "{ single } braces {", "}", "{", "{ {{userId}} }", "{{userId}}", "{{ userId }}", "{{\tuserId\t}}",
		"{{tag.a}}", "{{tag.A-b_c.d9}}", "{{tag." + strings.Repeat("z", 64) + "}}", `{{tag.a|"x"}}`, `{{ tag.a | "x" }}`,
		`{{tag.a | ""}}`, `{{tag.a | "}}"}}`, `{{tag.a | "{{"}}`, `{{tag.a | "\"\\"}}`, "{{userId}}{{tag.a}}",
	} {
		if d := render.Check(text, "title"); d != nil {
			t.Errorf("Check(%q): got %v, want none", text, d)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	user := map[string]string{"name": "민지", "n": "3", "b": "true", "empty": "", "q": `"quoted"`}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"Static", "hello, world", "hello, world"},
		{"UserID", "hi {{userId}}!", "hi u-1!"},
		{"Tag", "hi {{tag.name}}", "hi 민지"},
		{"Spaces", "hi {{  tag.name  }}", "hi 민지"},
		{"MissingNoDefault", "hi {{tag.nick}}!", "hi !"},
		{"MissingDefault", `hi {{tag.nick | "friend"}}!`, "hi friend!"},
		{"PresentIgnoresDefault", `hi {{tag.name | "friend"}}`, "hi 민지"},
		{"EmptyValueIsPresent", `[{{tag.empty | "x"}}]`, "[]"},
		{"EmptyDefault", `[{{tag.nick | ""}}]`, "[]"},
		{"DefaultEscapes", `{{tag.nick | "say \"hi\" \\o/"}}`, `say "hi" \o/`},
		{"DefaultEscapeFirst", `{{tag.nick | "\"x"}}`, `"x`},
		{"DefaultBraces", `a{{tag.nick | "}}{{"}}b`, "a}}{{b"},
		{"DefaultUnicode", `{{tag.nick | "친구 👋"}}`, "친구 👋"},
		{"DefaultNewline", "{{tag.nick | \"a\nb\"}}", "a\nb"},
		{"ValueNotReparsed", "{{tag.q}} {{tag.name}}", `"quoted" 민지`},
		{"Number", "{{tag.n}} new", "3 new"},
		{"Boolean", "vip={{tag.b}}", "vip=true"},
		{"Adjacent", "{{userId}}{{tag.name}}{{tag.n}}", "u-1민지3"},
		{"AtStart", "{{tag.name}} hi", "민지 hi"},
		{"AtEnd", "hi {{tag.name}}", "hi 민지"},
		{"Only", "{{userId}}", "u-1"},
		{"Twice", "{{tag.name}}/{{tag.name}}", "민지/민지"},
		{"UnicodeAround", "안녕 {{tag.name}} 님 🎉", "안녕 민지 님 🎉"},
		{"SingleBraces", "{ {{userId}} }", "{ u-1 }"},
		{"Many", strings.Repeat("{{tag.n}}", 12), strings.Repeat("3", 12)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tpl, err := render.Compile(tc.text)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tc.text, err)
			}
			if got := tpl.Render("u-1", tags(user)); got != tc.want {
				t.Errorf("Render(%q): got %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestRenderNilTag(t *testing.T) {
	t.Parallel()
	tpl, err := render.Compile(`{{userId}}: {{tag.a | "x"}}{{tag.b}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tpl.Render("u", nil), "u: x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var zero render.Template
	if got := zero.Render("u", nil); got != "" || !zero.Static() {
		t.Errorf("zero Template: got %q static %v, want \"\" static", got, zero.Static())
	}
}

func TestStaticAndTags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text   string
		static bool
		tags   []string
	}{
		{"plain { text }", true, nil},
		{"", true, nil},
		{"{{userId}}", false, nil},
		{`{{tag.b}} {{tag.a | "x"}} {{tag.b}} {{userId}}`, false, []string{"b", "a"}},
	} {
		tpl, err := render.Compile(tc.text)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.text, err)
		}
		if tpl.Static() != tc.static || !slices.Equal(tpl.Tags(), tc.tags) || tpl.Text() != tc.text {
			t.Errorf("Compile(%q): got static %v tags %q text %q, want %v %q %q",
				tc.text, tpl.Static(), tpl.Tags(), tpl.Text(), tc.static, tc.tags, tc.text)
		}
	}
}

// TestRenderAllocs holds the send path's promise: a static text costs no
// allocation, a dynamic one exactly its result.
func TestRenderAllocs(t *testing.T) {
	static, _ := render.Compile("오늘의 특가: 전 품목 20% 할인")
	dynamic, _ := render.Compile(`{{tag.name | "고객"}}님, {{userId}} 계정의 특가`)
	user := tags(map[string]string{"name": "민지"})
	for _, tc := range []struct {
		name string
		tpl  render.Template
		want float64
	}{{"Static", static, 0}, {"Dynamic", dynamic, 1}} {
		if got := testing.AllocsPerRun(100, func() { tc.tpl.Render("u-1", user) }); got != tc.want {
			t.Errorf("%s: got %v allocations, want %v", tc.name, got, tc.want)
		}
	}
}
