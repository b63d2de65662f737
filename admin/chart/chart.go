// Package chart draws the dashboard's charts as SVG, on the server, with
// no script: bars of a few series over buckets of time, and a funnel.
// Every value drawn carries its exact figure twice, in a <title> (shown
// on hover, read by screen readers) and in data-* attributes (read back
// by tests); the colours come from the page's style sheet, by class.
package chart

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Series is one kind of value over the buckets: Key names it in the
// markup (class "s-<key>", data-series), Name in the legend and titles.
type Series struct {
	Key, Name string
	Values    []int64
}

// Bucket is one place on the horizontal axis: Key, in data-bucket, names
// it for a machine; Label for a reader, under the axis when there is
// room; Title in each of its bars' titles (Label when "").
type Bucket struct {
	Key, Label, Title string
}

// Bars is a grouped bar chart: for each bucket, one bar per series.
type Bars struct {
	// ID is the svg element's id; Title its accessible name.
	ID, Title string
	Buckets   []Bucket
	// Series each hold one value per bucket; a missing value is 0.
	Series []Series
}

// Bar chart geometry, in the viewBox's units; the SVG is drawn to the
// width of its box.
const (
	barsW, barsH      = 720.0, 260.0
	barsLeft, barsTop = 52.0, 34.0
	barsRight         = 20.0
	barsBottom        = 34.0
	barsPlotW         = barsW - barsLeft - barsRight
	barsPlotH         = barsH - barsTop - barsBottom
	barsBase          = barsTop + barsPlotH
	// maxLabels bounds the labels under the axis; the others are in
	// the bars' titles only.
	maxLabels = 10
	// groupFill is the part of a bucket's width its bars take.
	groupFill = 0.8
)

// SVG returns the chart's markup: a y axis from 0 to a round number at or
// above the largest value, with up to five ticks; the buckets' bars, each
// with its value in data-value and its title; labels under some buckets;
// and a legend naming the series above the plot.
func (c Bars) SVG() string {
	var b strings.Builder
	top, step := scale(c.max())
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart bars" id="%s" viewBox="0 0 %g %g" role="img" aria-labelledby="%s-title">`,
		esc(c.ID), barsW, barsH, esc(c.ID))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, esc(c.ID), esc(c.Title))
	for i, s := range c.Series {
		x := barsLeft + float64(i)*130
		fmt.Fprintf(&b, `<g class="legend"><rect class="s-%s" x="%g" y="10" width="12" height="12"/><text x="%g" y="20">%s</text></g>`,
			esc(s.Key), x, x+18, esc(s.Name))
	}
	for i := 0.0; i*step <= top; i++ {
		v := i * step
		y := barsBase - barsPlotH*v/top
		fmt.Fprintf(&b, `<line class="grid" x1="%g" y1="%.2f" x2="%g" y2="%.2f"/><text class="tick" x="%g" y="%.2f" dx="-6" dy="4" text-anchor="end">%s</text>`,
			barsLeft, y, barsW-barsRight, y, barsLeft, y, compact(v))
	}
	n := len(c.Buckets)
	slot := barsPlotW / float64(max(n, 1))
	every := (n + maxLabels - 1) / maxLabels
	barW := slot * groupFill / float64(max(len(c.Series), 1))
	for i, k := range c.Buckets {
		x0 := barsLeft + float64(i)*slot + slot*(1-groupFill)/2
		title := k.Title
		if title == "" {
			title = k.Label
		}
		fmt.Fprintf(&b, `<g class="bucket" data-bucket="%s">`, esc(k.Key))
		for j, s := range c.Series {
			v := value(s.Values, i)
			h := barsPlotH * float64(v) / top
			fmt.Fprintf(&b, `<rect class="s-%s" data-series="%s" data-value="%d" x="%.2f" y="%.2f" width="%.2f" height="%.2f"><title>%s: %s %s</title></rect>`,
				esc(s.Key), esc(s.Key), v, x0+float64(j)*barW, barsBase-h, barW, h, esc(title), grouped(v), esc(strings.ToLower(s.Name)))
		}
		if i%every == 0 {
			fmt.Fprintf(&b, `<text class="label" x="%.2f" y="%g" dy="-6" text-anchor="middle">%s</text>`, x0+slot*groupFill/2, barsH, esc(k.Label))
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/></svg>`, barsLeft, barsBase, barsW-barsRight, barsBase)
	return b.String()
}

// max is the largest value of any series, at least 0.
func (c Bars) max() int64 {
	var m int64
	for _, s := range c.Series {
		for i := range c.Buckets {
			m = max(m, value(s.Values, i))
		}
	}
	return m
}

func value(vs []int64, i int) int64 {
	if i < len(vs) && vs[i] > 0 {
		return vs[i]
	}
	return 0
}

// scale returns the top of an axis from 0 holding m, and its tick step:
// the step is 1, 2 or 5 times a power of ten, at least 1, and the top
// the first multiple of it at or above m, at most four steps up.
func scale(m int64) (top, step float64) {
	if m <= 0 {
		return 1, 1
	}
	raw := float64(m) / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, f := range []float64{1, 2, 5} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	step = math.Max(step, 1)
	return step * math.Ceil(float64(m)/step), step
}

// compact writes a tick's value short: 0, 750, 1.5k, 20M, 5G.
func compact(v float64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// grouped writes n with its thousands separated by commas.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// esc escapes text for an XML attribute or element, which HTML reads the
// same.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
