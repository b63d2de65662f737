package delivery

import (
	"math/rand/v2"
	"time"
)

// Backoff returns how long to wait before retry number attempt (1-based):
// exponential from 1 s, capped at 10 min, with ±25 % jitter, and never
// sooner than FCM's Retry-After.
func Backoff(attempt int, retryAfter time.Duration) time.Duration {
	return backoff(attempt, retryAfter, rand.Float64())
}

// backoff is Backoff with the service's jitter (Config.Jitter).
func (s *Service) backoff(attempt int, retryAfter time.Duration) time.Duration {
	return backoff(attempt, retryAfter, s.cfg.Jitter())
}

func backoff(attempt int, retryAfter time.Duration, jitter float64) time.Duration {
	const base, ceiling = time.Second, 10 * time.Minute
	d := ceiling
	if attempt < 20 {
		d = min(ceiling, base<<(attempt-1))
	}
	d = time.Duration(float64(d) * (0.75 + jitter/2))
	return max(d, retryAfter)
}
