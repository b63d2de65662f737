package herald

import "context"

// AppStore keeps apps. Lookups of a missing app return ErrNotFound.
type AppStore interface {
	CreateApp(ctx context.Context, app App) error
	App(ctx context.Context, id string) (App, error)
	AppByAPIKey(ctx context.Context, apiKey string) (App, error)
	ListApps(ctx context.Context) ([]App, error)
	// UpdateApp writes the settings of app: name, tier, features, time zone
	// and default consent. Keys and credentials have their own methods.
	UpdateApp(ctx context.Context, app App) error
	DeleteApp(ctx context.Context, id string) error
	SetSecretHash(ctx context.Context, id string, hash []byte) error
	// SetFCMCredentials stores the sealed service-account file; nil removes it.
	SetFCMCredentials(ctx context.Context, id string, sealed []byte) error
	// SetWebhook stores the URL and sealed secret; an empty URL removes both.
	SetWebhook(ctx context.Context, id, url string, sealedSecret []byte) error
}

// UserStore keeps app users and their devices (token mappings).
type UserStore interface {
	// RegisterDevice upserts a device; a token another device holds moves
	// to this one. With a user ID it maps the device, registering the user
	// (again, when withdrawn).
	RegisterDevice(ctx context.Context, appID string, reg DeviceRegistration) (Device, error)
	// SetDeviceUser maps a device to a user (registering the user) or, with
	// nil, unmaps it. ErrNotFound when the device is unknown.
	SetDeviceUser(ctx context.Context, appID, deviceID string, userID *string) (Device, error)
	// SetDeviceConsent applies the in-app consent switch to one device.
	// ErrNotFound when the device is unknown; ErrInvalidRequest on a change
	// the device's pair cannot take.
	SetDeviceConsent(ctx context.Context, appID, deviceID string, change ConsentChange) (Device, error)
	// DeleteDevice removes a device and its token. ErrNotFound when unknown.
	DeleteDevice(ctx context.Context, appID, deviceID string) error
	// DeleteToken removes the device holding token. ErrNotFound when none.
	DeleteToken(ctx context.Context, appID, token string) error
	// SetUserConsent applies change to the user and every device mapped to
	// it. ErrUserNotFound, ErrUserWithdrawn, or ErrInvalidRequest.
	SetUserConsent(ctx context.Context, appID, userID string, change ConsentChange) (Consent, error)
	// WithdrawUser removes every device of the user and resets its consent.
	// ErrUserNotFound or ErrUserWithdrawn.
	WithdrawUser(ctx context.Context, appID, userID string) error
	// User returns a user and its devices. ErrUserNotFound when the user was
	// never registered.
	User(ctx context.Context, appID, userID string) (User, []Device, error)
}
