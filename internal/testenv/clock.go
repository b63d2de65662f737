package testenv

import (
	"sync"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/server"
)

// Clock is a clock a test can set: running from the set time, or frozen
// at it. Its Now is the node's clock (Options.Now) and its River River's
// (Options.RiverNow). The emulator keeps the real clock: it checks the
// expiry of the JWTs that x/oauth2 signs on the real one.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	frozen *time.Time
	// riverAhead is how far River's clock (River) runs ahead of the real
	// one.
	riverAhead time.Duration
}

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen != nil {
		return *c.frozen
	}
	return time.Now().Add(c.offset)
}

// Run makes the clock read t now and run on from there.
func (c *Clock) Run(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen, c.offset = nil, time.Until(t)
}

// Freeze stops the clock at t.
func (c *Clock) Freeze(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = &t
}

// River is River's clock for a test that skips a scheduled job's real
// wait: the real clock, ahead by what was skipped (AdvanceRiver).
func (c *Clock) River() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.riverAhead)
}

// AdvanceRiver moves River's clock d further ahead of the real one.
func (c *Clock) AdvanceRiver(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.riverAhead += d
}

// Fake converts a reading of the real clock to this clock (running mode).
func (c *Clock) Fake(real time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return real.Add(c.offset)
}

// Clocked is the options of a node on clk (Now).
func Clocked(clk *Clock) Options { return Options{Overrides: server.Overrides{Clock: clk.Now}} }

// Slotted is the options of a node on clk with River on clk.River, for a
// test of a real scheduled send.
func Slotted(clk *Clock) Options {
	return Options{Overrides: server.Overrides{Clock: clk.Now, RiverClock: clk.River}}
}

// Seoul is the zone of an app that names none (herald.DefaultTimeZone),
// which most tests make: where their night, morning and scheduled times
// fall.
var Seoul = func() *time.Location {
	loc, err := time.LoadLocation(herald.DefaultTimeZone)
	if err != nil {
		panic(err)
	}
	return loc
}()
