package webhook

// EventUndeliverable is the type of the event listing users a push could
// not reach.
const EventUndeliverable = "push.undeliverable"

// Reasons a user could not be reached (spec section 6).
const (
	// ReasonNoToken: the user has no push token (unknown, withdrawn or never
	// registered a token).
	ReasonNoToken = "NO_TOKEN"
	// ReasonTokenExpired: every token of the user was refused as stale or
	// invalid.
	ReasonTokenExpired = "TOKEN_EXPIRED"
	// ReasonAppDeleted: FCM reported the app uninstalled from every device.
	ReasonAppDeleted = "APP_DELETED"
)

// MaxUsersPerEvent bounds the users listed in one event; a push with more
// unreachable users is reported in several events.
const MaxUsersPerEvent = 1000

// Event is the JSON body of a webhook message.
type Event struct {
	Type      string        `json:"type"`
	Timestamp string        `json:"timestamp"` // RFC 3339
	Data      Undeliverable `json:"data"`
}

// Undeliverable is the data of a push.undeliverable event: one batch of the
// users a push could not reach.
type Undeliverable struct {
	AppID          string `json:"appId"`
	PushID         string `json:"pushId"`
	RequestGroupID string `json:"requestGroupId"`
	Users          []User `json:"users"`
}

// User is one unreachable user and why.
type User struct {
	UserID string `json:"userId"`
	Reason string `json:"reason"`
}

// Batches splits users into consecutive batches of at most limit users
// (MaxUsersPerEvent when limit <= 0). No users give no batches. The batches
// share users' backing array but cannot be appended into each other.
func Batches(users []User, limit int) [][]User {
	if limit <= 0 {
		limit = MaxUsersPerEvent
	}
	batches := make([][]User, 0, (len(users)+limit-1)/limit)
	for start := 0; start < len(users); start += limit {
		end := min(start+limit, len(users))
		batches = append(batches, users[start:end:end])
	}
	return batches
}
