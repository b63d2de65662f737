package render_test

import (
	"fmt"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/render"
)

func BenchmarkRenderStatic(b *testing.B) {
	tpl, _ := render.Compile("(광고) 오늘의 특가: 전 품목 20% 할인, 지금 확인하세요")
	user := tags(map[string]string{"name": "민지"})
	b.ReportAllocs()
	for b.Loop() {
		tpl.Render("user-000123", user)
	}
}

func BenchmarkRenderTwoPlaceholders(b *testing.B) {
	tpl, _ := render.Compile(`(광고) {{tag.name | "고객"}}님, {{tag.city}}의 오늘 특가를 확인하세요`)
	user := tags(map[string]string{"name": "민지", "city": "서울"})
	b.ReportAllocs()
	for b.Loop() {
		tpl.Render("user-000123", user)
	}
}

// BenchmarkConcatTwoValues is the floor BenchmarkRenderTwoPlaceholders is
// judged against: the same text and lookups, written by hand.
func BenchmarkConcatTwoValues(b *testing.B) {
	user := tags(map[string]string{"name": "민지", "city": "서울"})
	b.ReportAllocs()
	for b.Loop() {
		name, ok := user("name")
		if !ok {
			name = "고객"
		}
		city, _ := user("city")
		_ = "(광고) " + name + "님, " + city + "의 오늘 특가를 확인하세요"
	}
}

// thirtyEntries is a message with 30 entries: ko-KR, ja-JP … and fr.
func thirtyEntries(b *testing.B) *render.Message {
	l := render.Localized{}
	for i := range 29 {
		l[fmt.Sprintf("x%c%c-KR", 'a'+i/26, 'a'+i%26)] = render.Entry{Title: "t", Content: "c"}
	}
	l["fr"] = render.Entry{Title: "Bonjour", Content: "c"}
	m, err := render.NewMessage(herald.Content{Title: "t", Content: "c"}, l)
	if err != nil || m.Variants() != 31 {
		b.Fatalf("got %v, %d variants", err, m.Variants())
	}
	return m
}

func BenchmarkChoose30(b *testing.B) {
	m := thirtyEntries(b)
	for _, bc := range []struct{ name, locale string }{
		{"Exact", "fr"},                 // found at once
		{"Language", "fr-CA"},           // found after one cut
		{"SameLanguage", "xab-Latn-US"}, // xab-KR, by the scan of every entry
		{"None", "de-DE"},               // cuts, then the scan: the default
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Choose(bc.locale)
			}
		})
	}
}
