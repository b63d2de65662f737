package render_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/render"
)

func TestMessage(t *testing.T) {
	t.Parallel()
	def := herald.Content{Title: "Hi {{tag.name | \"there\"}}", Content: "default for {{userId}}", LinkURL: "https://x"}
	l := render.Localized{
		"ko":      {Title: "{{tag.name | \"고객\"}}님", Content: "안녕하세요"},
		"ja-JP":   {Title: "こんにちは", Content: "{{tag.city}}"},
		"en-GB":   {Title: "Hello", Content: "mate"},
		"zh-Hant": {Title: "你好", Content: "{{tag.name}}"},
	}
	m, err := render.NewMessage(def, l)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Variants(), 5; got != want {
		t.Fatalf("Variants: got %d, want %d", got, want)
	}
	// The stable order: the default, then the keys in byte order.
	var langs []string
	for v := range m.Variants() {
		langs = append(langs, m.Lang(v))
	}
	if want := []string{"", "en-GB", "ja-JP", "ko", "zh-Hant"}; !slices.Equal(langs, want) {
		t.Errorf("Lang: got %q, want %q", langs, want)
	}
	if got, want := m.Tags(), []string{"name", "city"}; !slices.Equal(got, want) {
		t.Errorf("Tags: got %q, want %q", got, want)
	}
	if m.Static() {
		t.Errorf("Static: got true, want false")
	}
	user := tags(map[string]string{"name": "민지"})
	for _, tc := range []struct {
		locale      string
		variant     int
		title, body string
	}{
		{"ko-KR", 3, "민지님", "안녕하세요"},
		{"KO", 3, "민지님", "안녕하세요"},
		{"ja", 2, "こんにちは", ""},
		{"en-US", 1, "Hello", "mate"},
		{"zh-Hant-TW", 4, "你好", "민지"},
		{"fr-FR", 0, "Hi 민지", "default for u-1"},
		{"", 0, "Hi 민지", "default for u-1"},
	} {
		v := m.Choose(tc.locale)
		title, body := m.Render(v, "u-1", user)
		if v != tc.variant || title != tc.title || body != tc.body {
			t.Errorf("%q: got variant %d %q %q, want %d %q %q", tc.locale, v, title, body, tc.variant, tc.title, tc.body)
		}
	}
	for _, v := range []int{-1, 5, 100} {
		if title, _ := m.Render(v, "u-1", nil); title != "Hi there" {
			t.Errorf("Render(%d): got %q, want the default's", v, title)
		}
		if got := m.Lang(v); got != "" {
			t.Errorf("Lang(%d): got %q, want \"\"", v, got)
		}
	}
}

func TestMessageStatic(t *testing.T) {
	m, err := render.NewMessage(herald.Content{Title: "t", Content: "c"}, render.Localized{"ko": {Title: "제목", Content: "내용"}})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Static() || m.Tags() != nil || m.Variants() != 2 {
		t.Errorf("got static %v tags %q variants %d, want true, none, 2", m.Static(), m.Tags(), m.Variants())
	}
	if got := testing.AllocsPerRun(100, func() { m.Render(m.Choose("ko-KR"), "u-1", nil) }); got != 0 {
		t.Errorf("Choose and Render: got %v allocations, want 0", got)
	}
}

func TestNewMessageError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		def  herald.Content
		l    render.Localized
		want string
	}{
		{herald.Content{Title: "{{x}}", Content: "c"}, nil, "title: render: at character 1, {{x}} is not a placeholder"},
		{herald.Content{Title: "t", Content: "}}"}, nil, `content: render: at character 1, "}}" closes no`},
		{herald.Content{Title: "t", Content: "c"}, render.Localized{"ko": {Title: "t", Content: "{{userId"}}, `localized.ko.content: render: at character 1, "{{" is not closed`},
	} {
		_, err := render.NewMessage(tc.def, tc.l)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("NewMessage(%+v, %v): got %v, want %q…", tc.def, tc.l, err, tc.want)
		}
	}
}
