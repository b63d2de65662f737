package admin

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
)

const (
	// maxUsageDays bounds the dashboard's usage range, so that one bar per
	// day stays readable (the JSON API has no such bound).
	maxUsageDays = 366
	// maxOutcomeScan bounds the pushes read for the per-day outcomes.
	maxOutcomeScan = 5000
)

// usageDay is one day of the usage page: its charge, the outcomes of the
// pushes accepted that day, and its bar in the chart.
type usageDay struct {
	Date   string
	Half   int64
	Counts herald.Counts
	Bar    bar
	// Label is the date shown under the bar; "" under most bars of a long
	// range.
	Label string
}

// bar is a rectangle in the chart's coordinates; LabelX is the centre.
type bar struct{ X, Y, W, H, LabelX float64 }

// Chart geometry, in the SVG's viewBox units; the SVG is drawn to the
// width of the screen.
const (
	chartW, chartH             = 600.0, 200.0
	chartLeft, chartRight      = 48.0, 8.0
	chartTop, chartBottom      = 12.0, 26.0
	chartPlotW                 = chartW - chartLeft - chartRight
	chartPlotH                 = chartH - chartTop - chartBottom
	chartBaseline              = chartTop + chartPlotH
	chartLabelY                = chartH - 8
	chartMaxLabels, chartRatio = 7, 0.7
)

type usageData struct {
	From, To  string
	Days      []usageDay
	TotalHalf int64
	Total     herald.Counts
	// MaxHalf is the tallest bar's charge, the top of the axis.
	MaxHalf int64
	// Partial: the outcomes cover only the newest maxOutcomeScan pushes.
	Partial bool
	W, H    float64
	// Baseline, Top and Left place the axes.
	Baseline, Top, Left, Right float64
}

// usagePage shows the Server Actions charged per day from..to (this month
// so far by default), in the app's time zone, as a bar chart with every
// day, beside the sent, failed and suppressed messages of each day.
func (d *dashboard) usagePage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &usageData{W: chartW, H: chartH, Baseline: chartBaseline, Top: chartTop, Left: chartLeft, Right: chartW - chartRight}
	v := viewOf("Usage", a, data)
	days, err := d.usageDays(r.Context(), a, r, data)
	if err != nil {
		d.failOn(w, r, err, "usage", v)
		return
	}
	data.Days = days
	drawBars(data)
	d.render(w, r, http.StatusOK, "usage", v)
}

// usageDays reads the range, the charges and the outcomes into one entry
// per day, zeros included.
func (d *dashboard) usageDays(ctx context.Context, a herald.App, r *http.Request, data *usageData) ([]usageDay, error) {
	var err error
	if data.From, data.To, err = d.usageRange(a, r.URL.Query()); err != nil {
		return nil, err
	}
	from, _ := time.Parse(time.DateOnly, data.From)
	to, _ := time.Parse(time.DateOnly, data.To)
	n := int(to.Sub(from).Hours()/24) + 1
	if n > maxUsageDays {
		return nil, herald.Invalid(herald.Detail{Field: "to", Reason: fmt.Sprintf("must be at most %d days after from on the dashboard (the admin API has no such limit)", maxUsageDays-1)})
	}
	charged, err := d.Store.Usage(ctx, a.ID, data.From, data.To)
	if err != nil {
		return nil, err
	}
	outcomes, partial, err := d.dayOutcomes(ctx, a, data.From, data.To)
	if err != nil {
		return nil, err
	}
	data.Partial = partial
	half := map[string]int64{}
	for _, c := range charged {
		half[c.Date] = c.Half
	}
	days := make([]usageDay, n)
	for i := range days {
		date := from.AddDate(0, 0, i).Format(time.DateOnly)
		days[i] = usageDay{Date: date, Half: half[date], Counts: outcomes[date]}
		data.TotalHalf += days[i].Half
		data.Total.Add(days[i].Counts)
		data.MaxHalf = max(data.MaxHalf, days[i].Half)
	}
	return days, nil
}

// dayOutcomes sums the counts of the pushes accepted on each day from..to
// (in the app's time zone). It reads the history newest first and stops
// after maxOutcomeScan pushes, reporting that the sums are partial then.
func (d *dashboard) dayOutcomes(ctx context.Context, a herald.App, from, to string) (map[string]herald.Counts, bool, error) {
	out := map[string]herald.Counts{}
	loc := a.Location()
	f := herald.PushFilter{Limit: 200}
	for read := 0; ; {
		ps, next, err := d.Store.Pushes(ctx, a.ID, f)
		if err != nil {
			return nil, false, err
		}
		for _, p := range ps {
			day := p.CreatedAt.In(loc).Format(time.DateOnly)
			if day < from {
				return out, false, nil
			}
			if day <= to {
				c := out[day]
				c.Add(p.Counts)
				out[day] = c
			}
		}
		if read += len(ps); next == "" {
			return out, false, nil
		} else if read >= maxOutcomeScan {
			return out, true, nil
		}
		f.Cursor = next
	}
}

// drawBars lays out one bar per day, scaled to the tallest, with a few
// dates labelled; a day without charges gets a thin mark on the axis.
func drawBars(data *usageData) {
	n := len(data.Days)
	if n == 0 {
		return
	}
	slot := chartPlotW / float64(n)
	every := int(math.Ceil(float64(n) / chartMaxLabels))
	for i := range data.Days {
		day := &data.Days[i]
		b := bar{W: math.Max(slot*chartRatio, 1)}
		b.X = chartLeft + float64(i)*slot + (slot-b.W)/2
		b.LabelX = b.X + b.W/2
		b.H = 1
		if data.MaxHalf > 0 && day.Half > 0 {
			b.H = math.Max(chartPlotH*float64(day.Half)/float64(data.MaxHalf), 1)
		}
		b.Y = chartBaseline - b.H
		day.Bar = b
		if i%every == 0 || i == n-1 && n <= chartMaxLabels {
			day.Label = day.Date[5:]
		}
	}
}
