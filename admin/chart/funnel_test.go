package chart

import (
	"math"
	"strings"
	"testing"
)

// steps returns a parsed funnel's steps, each the g carrying its value,
// with the figure it shows and its bar.
func steps(t *testing.T, f Funnel) (gs []*element, figures []string, fills []*element) {
	t.Helper()
	els := parse(t, f.SVG())
	for i, e := range els {
		if e.name == "g" && e.attr["data-step"] != "" {
			gs = append(gs, e)
			figures = append(figures, els[i+2].text)
			fills = append(fills, els[i+4])
		}
	}
	return gs, figures, fills
}

func push() Funnel {
	return Funnel{ID: "funnel", Title: "From targeted to opened", OfName: "targeted", Chained: true, Steps: []Step{
		{"targeted", "Targeted", 200}, {"sent", "Sent", 150}, {"received", "Received", 75}, {"opened", "Opened", 1}}}
}

// TestFunnelValues: each step carries its value; its figure gives it with
// its share of the step before; its bar's width is its share of the
// first step, and its title says the same as the figure.
func TestFunnelValues(t *testing.T) {
	f := push()
	gs, figures, fills := steps(t, f)
	want := []string{"200", "150 (75% of targeted)", "75 (50% of sent)", "1 (1% of received)"}
	for i, s := range f.Steps {
		if gs[i].attr["data-step"] != s.Key || gs[i].attr["data-value"] != grouped(s.Value) || figures[i] != want[i] {
			t.Errorf("step %d: got %v, figure %q; want %s = %d, %q", i, gs[i].attr, figures[i], s.Key, s.Value, want[i])
		}
		if w := num(t, fills[i], "width"); math.Abs(w-funnelW*float64(s.Value)/200) > 0.01 || fills[i].attr["class"] != "s-"+s.Key {
			t.Errorf("step %s: bar %v wide, class %q; want %v, s-%s", s.Key, w, fills[i].attr["class"], funnelW*float64(s.Value)/200, s.Key)
		}
		if fills[i].title != s.Name+": "+want[i] {
			t.Errorf("step %s: title %q", s.Key, fills[i].title)
		}
	}
}

// TestFunnelAside: rows not chained each give their share of Of, their
// bars on its scale.
func TestFunnelAside(t *testing.T) {
	f := Funnel{ID: "aside", Title: "Not sent", Of: 400, OfName: "targeted",
		Steps: []Step{{"suppressed", "Suppressed", 100}, {"failed", "Failed", 0}}}
	_, figures, fills := steps(t, f)
	if strings.Join(figures, "|") != "100 (25% of targeted)|0 (0% of targeted)" {
		t.Errorf("figures: got %q", figures)
	}
	if w := num(t, fills[0], "width"); math.Abs(w-funnelW/4) > 0.01 {
		t.Errorf("a quarter of Of: %v wide, want %v", w, funnelW/4)
	}
}

// TestFunnelZero: a push that targeted nothing draws empty bars and no
// share; a funnel without steps is an empty, valid svg.
func TestFunnelZero(t *testing.T) {
	f := push()
	for i := range f.Steps {
		f.Steps[i].Value = 0
	}
	_, figures, fills := steps(t, f)
	for i := range fills {
		if num(t, fills[i], "width") != 0 || figures[i] != "0" {
			t.Errorf("step %d: width %v, figure %q; want 0 and no share", i, fills[i].attr["width"], figures[i])
		}
	}
	if gs, _, _ := steps(t, Funnel{ID: "none", Title: "none"}); len(gs) != 0 {
		t.Errorf("no steps: got %d", len(gs))
	}
}

// TestFunnelHuge: the largest int64 is exact in its data-value and
// figure, and no bar is wider than the funnel, even a step above Of.
func TestFunnelHuge(t *testing.T) {
	f := Funnel{ID: "h", Title: "h", Chained: true, Steps: []Step{{"targeted", "Targeted", math.MaxInt64}, {"sent", "Sent", math.MaxInt64 - 1}}}
	gs, figures, fills := steps(t, f)
	if gs[0].attr["data-value"] != "9223372036854775807" || figures[1] != "9,223,372,036,854,775,806 (99.9% of targeted)" {
		t.Errorf("got %v, %q", gs[0].attr, figures)
	}
	over := Funnel{ID: "o", Title: "o", Of: 10, OfName: "targeted", Steps: []Step{{"x", "X", 20}}}
	if _, _, fills := steps(t, over); num(t, fills[0], "width") != funnelW {
		t.Errorf("a step over Of: %v wide, want the funnel's width", fills[0].attr["width"])
	}
	for _, r := range fills {
		if w := num(t, r, "width"); w > funnelW {
			t.Errorf("bar %v wide, over the funnel's %v", w, funnelW)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		n, of int64
		want  string
	}{{0, 5, "0%"}, {1, 1000000, "0.1%"}, {1, 3, "33%"}, {999, 1000, "99.9%"}, {9999, 10000, "99.9%"}, {5, 5, "100%"}, {1, 200, "0.5%"}, {math.MaxInt64 - 1, math.MaxInt64, "99.9%"}, {1, math.MaxInt64, "0.1%"}} {
		if got := percent(tc.n, tc.of); got != tc.want {
			t.Errorf("percent(%d, %d) = %s, want %s", tc.n, tc.of, got, tc.want)
		}
	}
}
