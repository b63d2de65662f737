package testenv

import (
	"sync"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/server"
)

// Clock is a clock a test can set: running from the set time, or frozen
// at it. Its Now is the node's clock, River's included
// (server.Overrides.Clock), so a job due at a time on it runs when it
// reads that time. The emulator keeps the real clock: it checks the
// expiry of the JWTs that x/oauth2 signs on the real one.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	frozen *time.Time
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

// Fake converts a reading of the real clock to this clock (running mode).
func (c *Clock) Fake(real time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return real.Add(c.offset)
}

// Clocked is the options of a node on clk (Now).
func Clocked(clk *Clock) Options { return Options{Overrides: server.Overrides{Clock: clk.Now}} }

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
