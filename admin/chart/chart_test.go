package chart

import (
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// element is one element of a parsed chart: its name, attributes and
// the text directly inside it, with that of its <title>.
type element struct {
	name        string
	attr        map[string]string
	text, title string
}

// parse decodes svg as XML, failing the test unless the whole of it is
// well formed, and returns its elements in order.
func parse(t *testing.T, svg string) []*element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	var out, open []*element
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			out, open = append(out, e), append(open, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) == 0 {
				t.Fatalf("text outside the svg: %q", tok)
			}
			e := open[len(open)-1]
			e.text += string(tok)
			if e.name == "title" && len(open) > 1 {
				open[len(open)-2].title += string(tok)
			}
		}
	}
	if len(out) == 0 || out[0].name != "svg" {
		t.Fatalf("want one svg element, got %s", svg)
	}
	return out
}

// num reads a numeric attribute, failing on anything not a finite number.
func num(t *testing.T, e *element, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attr[name], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		t.Fatalf("%s %s=%q: not a finite number", e.name, name, e.attr[name])
	}
	return v
}

// bars returns the bars of a parsed chart by series, in bucket order.
func bars(els []*element) map[string][]*element {
	out := map[string][]*element{}
	for _, e := range els {
		if e.name == "rect" && e.attr["data-series"] != "" {
			out[e.attr["data-series"]] = append(out[e.attr["data-series"]], e)
		}
	}
	return out
}

// texts returns the text of the elements of class.
func texts(els []*element, class string) []string {
	var out []string
	for _, e := range els {
		if e.name == "text" && e.attr["class"] == class {
			out = append(out, e.text)
		}
	}
	return out
}

func week() Bars {
	return Bars{ID: "ov", Title: "Sent, received and opened per day",
		Buckets: []Bucket{{"2026-12-01", "Dec 1", ""}, {"2026-12-02", "Dec 2", ""}, {"2026-12-03", "Dec 3", ""}},
		Series: []Series{{"sent", "Sent", []int64{7, 0, 3}}, {"received", "Received", []int64{5, 0, 2}},
			{"opened", "Opened", []int64{1, 0, 2}}}}
}

// TestBarsValues: each bar carries its series, bucket and value, and its
// title says them to a reader; the legend names the series.
func TestBarsValues(t *testing.T) {
	c := week()
	els := parse(t, c.SVG())
	got := bars(els)
	for _, s := range c.Series {
		if len(got[s.Key]) != len(c.Buckets) {
			t.Fatalf("%s: got %d bars, want %d", s.Key, len(got[s.Key]), len(c.Buckets))
		}
		for i, r := range got[s.Key] {
			if r.attr["data-value"] != strconv.FormatInt(s.Values[i], 10) || r.attr["class"] != "s-"+s.Key {
				t.Errorf("%s bar %d: got value %q, class %q; want %d, s-%s", s.Key, i, r.attr["data-value"], r.attr["class"], s.Values[i], s.Key)
			}
			if want := c.Buckets[i].Label + ": " + strconv.FormatInt(s.Values[i], 10) + " " + strings.ToLower(s.Name); r.title != want {
				t.Errorf("%s bar %d: title %q, want %q", s.Key, i, r.title, want)
			}
		}
	}
	var buckets []string
	for _, e := range els {
		if e.name == "g" && e.attr["data-bucket"] != "" {
			buckets = append(buckets, e.attr["data-bucket"])
		}
	}
	if strings.Join(buckets, ",") != "2026-12-01,2026-12-02,2026-12-03" {
		t.Errorf("buckets: got %v", buckets)
	}
	var legend []string
	for _, e := range els {
		if e.name == "text" && e.attr["class"] == "" {
			legend = append(legend, e.text)
		}
	}
	if strings.Join(legend, ",") != "Sent,Received,Opened" {
		t.Errorf("legend: got %v, want the series' names", legend)
	}
	if els[0].attr["role"] != "img" || els[1].name != "title" || els[1].text != c.Title || els[0].attr["aria-labelledby"] != els[1].attr["id"] {
		t.Errorf("the svg is not named by its title: %+v %+v", els[0].attr, els[1])
	}
}

// TestBarsScale: the axis tops at a round number at or above the largest
// value (7 → 8, in steps of 2), and each bar's height is its value's share
// of it, standing on the axis.
func TestBarsScale(t *testing.T) {
	els := parse(t, week().SVG())
	if got := strings.Join(texts(els, "tick"), ","); got != "0,2,4,6,8" {
		t.Errorf("ticks: got %s, want 0,2,4,6,8", got)
	}
	for _, r := range bars(els)["sent"] {
		v, _ := strconv.ParseFloat(r.attr["data-value"], 64)
		if h := num(t, r, "height"); math.Abs(h-barsPlotH*v/8) > 0.01 {
			t.Errorf("bar of %v: height %v, want %v", v, h, barsPlotH*v/8)
		}
		if bottom := num(t, r, "y") + num(t, r, "height"); math.Abs(bottom-barsBase) > 0.01 {
			t.Errorf("bar of %s: bottom at %v, want the axis at %v", r.attr["data-value"], bottom, barsBase)
		}
	}
	for _, tc := range []struct{ max, top, step int64 }{{1, 1, 1}, {4, 4, 1}, {5, 6, 2}, {10, 10, 5}, {99, 100, 50}, {1234, 1500, 500}, {2_000_000, 2_000_000, 500_000}} {
		top, step := scale(tc.max)
		if top != float64(tc.top) || step != float64(tc.step) || top/step > 4 {
			t.Errorf("scale(%d): got %v by %v, want %d by %d", tc.max, top, step, tc.top, tc.step)
		}
	}
}

// TestBarsZero: a chart of zeros, or of no series, is drawn with flat
// bars on an axis from 0 to 1, every number finite.
func TestBarsZero(t *testing.T) {
	for _, c := range []Bars{
		{ID: "z", Title: "zero", Buckets: week().Buckets, Series: []Series{{"sent", "Sent", []int64{0, 0, 0}}, {"opened", "Opened", nil}}},
		{ID: "none", Title: "nothing", Buckets: week().Buckets},
		{ID: "empty", Title: "no bucket", Series: week().Series},
	} {
		els := parse(t, c.SVG())
		for _, e := range els {
			for _, a := range []string{"x", "y", "width", "height", "x1", "y1", "x2", "y2"} {
				if _, ok := e.attr[a]; ok {
					num(t, e, a)
				}
			}
		}
		for _, rs := range bars(els) {
			for _, r := range rs {
				if num(t, r, "height") != 0 || r.attr["data-value"] != "0" {
					t.Errorf("%s: bar %+v, want flat, value 0", c.ID, r.attr)
				}
			}
		}
		if got := strings.Join(texts(els, "tick"), ","); got != "0,1" {
			t.Errorf("%s: ticks %s, want 0,1", c.ID, got)
		}
	}
}

// TestBarsHuge: the largest int64 is written exactly in data-value and the
// title, its bar fits the plot, and the ticks are short.
func TestBarsHuge(t *testing.T) {
	c := Bars{ID: "h", Title: "huge", Buckets: []Bucket{{Key: "a", Label: "A"}, {Key: "b", Label: "B"}},
		Series: []Series{{"sent", "Sent", []int64{math.MaxInt64, 1}}}}
	els := parse(t, c.SVG())
	r := bars(els)["sent"]
	if r[0].attr["data-value"] != "9223372036854775807" || r[0].title != "A: 9,223,372,036,854,775,807 sent" {
		t.Errorf("huge bar: value %q, title %q", r[0].attr["data-value"], r[0].title)
	}
	if h := num(t, r[0], "height"); h > barsPlotH || h < barsPlotH/2 {
		t.Errorf("huge bar: height %v, want within the plot (%v) and over half of it", h, barsPlotH)
	}
	for _, tick := range texts(els, "tick") {
		if len(tick) > 5 || strings.ContainsAny(tick, "e+") {
			t.Errorf("tick %q: want a short figure", tick)
		}
	}
}

// TestBarsOneBucket: one bucket's bars fill the plot's middle and it is
// labelled; a long range labels at most maxLabels buckets, the first
// among them.
func TestBarsOneBucket(t *testing.T) {
	c := Bars{ID: "one", Title: "one", Buckets: []Bucket{{"2026-12-03T10:00:00+09:00", "10:00", "Dec 3 10:00"}}, Series: week().Series}
	els := parse(t, c.SVG())
	if got := texts(els, "label"); len(got) != 1 || got[0] != "10:00" {
		t.Errorf("labels: got %v, want 10:00", got)
	}
	if r := bars(els)["sent"]; r[0].title != "Dec 3 10:00: 7 sent" {
		t.Errorf("title: got %q, want the bucket's title", r[0].title)
	}
	for _, rs := range bars(els) {
		if x, w := num(t, rs[0], "x"), num(t, rs[0], "width"); x < barsLeft || x+w > barsW-barsRight {
			t.Errorf("bar from %v, %v wide: outside the plot", x, w)
		}
	}
	var long Bars
	long.ID, long.Title = "long", "31 days"
	for i := range 31 {
		long.Buckets = append(long.Buckets, Bucket{Key: strconv.Itoa(i), Label: "d" + strconv.Itoa(i)})
	}
	labels := texts(parse(t, long.SVG()), "label")
	if len(labels) > maxLabels || labels[0] != "d0" {
		t.Errorf("31 buckets: labels %v, want at most %d from the first", labels, maxLabels)
	}
}

// TestBarsEscaped: labels, names and titles are text, never markup.
func TestBarsEscaped(t *testing.T) {
	evil := `</title><script>alert("x")</script>&amp; 'q'`
	c := Bars{ID: `a"b`, Title: evil, Buckets: []Bucket{{evil, evil, ""}}, Series: []Series{{`s"x`, evil, []int64{2}}}}
	svg := c.SVG()
	if strings.Contains(svg, "<script") {
		t.Fatalf("markup from a label: %s", svg)
	}
	els := parse(t, svg)
	if els[0].attr["id"] != `a"b` || els[1].text != evil {
		t.Errorf("id %q, title %q: want them as given", els[0].attr["id"], els[1].text)
	}
	if r := bars(els)[`s"x`]; len(r) != 1 || r[0].title != evil+": 2 "+strings.ToLower(evil) {
		t.Errorf("bar: got %+v", r)
	}
}
