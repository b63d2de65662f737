package chart

import (
	"fmt"
	"math"
	"strings"
)

// Step is one row of a funnel: Key names it in the markup (class
// "s-<key>", data-step), Name to a reader.
type Step struct {
	Key, Name string
	Value     int64
}

// Funnel is rows of horizontal bars on one scale, each with its value and
// a share: of the row before (Chained, as a funnel's steps), or of Of.
type Funnel struct {
	// ID is the svg element's id; Title its accessible name.
	ID, Title string
	Steps     []Step
	// Of is the value a full-width bar stands for (the funnel's first
	// step, or its largest when 0); OfName names it in the shares of rows
	// not chained.
	Of     int64
	OfName string
	// Chained gives each row after the first its share of the row
	// before; otherwise every row's share is of Of.
	Chained bool
}

// Funnel geometry: a row is its name and figures above its bar.
const (
	funnelW    = 480.0
	funnelRow  = 44.0
	funnelBar  = 16.0
	funnelText = 14.0
)

// SVG returns the funnel's markup: for each step its name, its value and
// share, and its bar, whose data-value holds the value.
func (f Funnel) SVG() string {
	of := f.Of
	if of <= 0 {
		for _, s := range f.Steps {
			of = max(of, s.Value)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart funnel" id="%s" viewBox="0 0 %g %g" role="img" aria-labelledby="%s-title">`,
		esc(f.ID), funnelW, funnelRow*float64(len(f.Steps))+4, esc(f.ID))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, esc(f.ID), esc(f.Title))
	for i, s := range f.Steps {
		y := float64(i) * funnelRow
		figure := grouped(s.Value)
		base, baseName := of, f.OfName
		if f.Chained && i > 0 {
			base, baseName = f.Steps[i-1].Value, strings.ToLower(f.Steps[i-1].Name)
		}
		if (!f.Chained || i > 0) && base > 0 {
			figure += fmt.Sprintf(" (%s of %s)", percent(s.Value, base), baseName)
		}
		w := 0.0
		if of > 0 {
			w = funnelW * min(float64(max(s.Value, 0))/float64(of), 1)
		}
		fmt.Fprintf(&b, `<g class="step" data-step="%s" data-value="%d">`, esc(s.Key), s.Value)
		fmt.Fprintf(&b, `<text class="name" x="0" y="%g">%s</text><text class="figure" x="%g" y="%g" text-anchor="end">%s</text>`,
			y+funnelText, esc(s.Name), funnelW, y+funnelText, esc(figure))
		fmt.Fprintf(&b, `<rect class="track" x="0" y="%g" width="%g" height="%g"/>`, y+20, funnelW, funnelBar)
		fmt.Fprintf(&b, `<rect class="s-%s" x="0" y="%g" width="%.2f" height="%g"><title>%s: %s</title></rect></g>`,
			esc(s.Key), y+20, w, funnelBar, esc(s.Name), esc(figure))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// percent writes n/of as a whole percentage, but under 1% or just under
// 100% to one decimal, so that a few in a million is not 0% nor almost
// all 100%.
func percent(n, of int64) string {
	p := 100 * float64(n) / float64(of)
	switch {
	case n > 0 && p < 1:
		return fmt.Sprintf("%.1f%%", math.Ceil(p*10)/10)
	case n < of && p > 99:
		return fmt.Sprintf("%.1f%%", min(math.Floor(p*10)/10, 99.9))
	}
	return fmt.Sprintf("%.0f%%", p)
}
