package sim

import "time"

// realNow is time.Now; inside the bubble it is the bubble's clock, so the
// figures it gives are of simulated time.
func realNow() time.Time { return time.Now() }
