package webhook

import "time"

// MaxRetries is how many times a failed webhook message is retried before
// it is given up.
const MaxRetries = 6

// RetryDelay returns how long to wait before retrying a message whose
// attempt-th delivery failed (attempt 1 is the first failure): 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h. After the sixth retry fails (attempt 7) it
// returns false: give up. An attempt below 1 also returns false.
func RetryDelay(attempt int) (time.Duration, bool) {
	switch attempt {
	case 1:
		return 5 * time.Second, true
	case 2:
		return 5 * time.Minute, true
	case 3:
		return 30 * time.Minute, true
	case 4:
		return 2 * time.Hour, true
	case 5:
		return 5 * time.Hour, true
	case 6:
		return 10 * time.Hour, true
	default:
		return 0, false
	}
}
