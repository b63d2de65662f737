package admin

import (
	"html/template"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin/chart"
)

// overviewChart draws the overview's window as bars of sent, received and
// opened: per local hour of the last day, per local day of 7 and 30, each
// bucket holding the pushes created in it.
func overviewChart(qs []herald.QuarterCounts, t herald.PushTotals, days int, loc *time.Location) template.HTML {
	hourly := days == 1
	c := chart.Bars{ID: "overview-chart", Title: "Sent, received and opened of the pushes created each day (" + loc.String() + ")"}
	if hourly {
		c.Title = "Sent, received and opened of the pushes created each hour (" + loc.String() + ")"
	}
	sent := chart.Series{Key: "sent", Name: "Sent"}
	received := chart.Series{Key: "received", Name: "Received"}
	opened := chart.Series{Key: "opened", Name: "Opened"}
	for _, b := range herald.OverviewBuckets(qs, t.From, t.To, hourly, loc) {
		k := chart.Bucket{Key: b.Start.Format(time.DateOnly), Label: b.Start.Format("Jan 2")}
		if hourly {
			k = chart.Bucket{Key: b.Start.Format(time.RFC3339), Label: b.Start.Format("15:04"), Title: b.Start.Format("Jan 2 15:04")}
		}
		c.Buckets = append(c.Buckets, k)
		sent.Values = append(sent.Values, int64(b.Sent))
		received.Values = append(received.Values, int64(b.Received))
		opened.Values = append(opened.Values, int64(b.Opened))
	}
	c.Series = []chart.Series{sent, received, opened}
	return template.HTML(c.SVG()) // the chart escapes every text it draws
}

// pushFunnel draws a push's funnel, targeted → sent → received → opened,
// and beside it what was not sent: suppressed by consent, the night or
// the frequency cap,
// failed, and (while it sends) not sent yet, each a share of targeted.
func pushFunnel(c herald.Counts) (funnel, aside template.HTML) {
	targeted := int64(c.Tokens)
	f := chart.Funnel{ID: "push-funnel", Title: "From the devices targeted to those that opened the push", Chained: true, Steps: []chart.Step{
		{Key: "targeted", Name: "Targeted", Value: targeted}, {Key: "sent", Name: "Sent", Value: int64(c.Sent)},
		{Key: "received", Name: "Received", Value: int64(c.Received)}, {Key: "opened", Name: "Opened", Value: int64(c.Opened)}}}
	a := chart.Funnel{ID: "push-not-sent", Title: "The devices targeted that were not sent the push", Of: targeted, OfName: "targeted", Steps: []chart.Step{
		{Key: "suppressed-consent", Name: "Suppressed (consent)", Value: int64(c.SuppressedConsent)},
		{Key: "suppressed-night", Name: "Suppressed (night)", Value: int64(c.SuppressedNight)},
		{Key: "suppressed-cap", Name: "Suppressed (frequency cap)", Value: int64(c.SuppressedCap)},
		{Key: "failed", Name: "Failed", Value: int64(c.Failed)}}}
	if open := c.Tokens - c.Sent - c.Failed - c.SuppressedConsent - c.SuppressedNight - c.SuppressedCap; open > 0 {
		a.Steps = append(a.Steps, chart.Step{Key: "waiting", Name: "Not sent yet", Value: int64(open)})
	}
	return template.HTML(f.SVG()), template.HTML(a.SVG()) // the charts escape every text they draw
}
