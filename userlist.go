package herald

import "time"

// UserFilter selects a page of an app's users, ordered by userId (bytewise).
type UserFilter struct {
	// Prefix keeps the users whose id starts with it; "" keeps all.
	Prefix string
	Limit  int
	// Cursor continues after the last user of the previous page.
	Cursor string
}

// Limits of the users list.
const (
	DefaultUserPage = 50
	MaxUserPage     = 200
)

// UserSummary is one user of the users list: withdrawn users are listed
// too, with their state.
type UserSummary struct {
	ID      string
	State   UserState
	Consent Consent
	// Devices is how many devices are mapped to the user now.
	Devices int
	// UpdatedAt is when the user's record last changed: registration (again,
	// after a withdrawal), a consent change of the user or of one of its
	// devices, withdrawal.
	UpdatedAt time.Time
}
