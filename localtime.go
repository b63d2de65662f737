package herald

import "time"

// Location returns the device's own time zone when it reported a valid
// one (DeviceRegistration.TimeZone), else app, the app's zone: where its
// night window (21:00–08:00) and a local-time push's wall clock are read
// (DESIGN 14).
func (d Device) Location(app *time.Location) *time.Location {
	if d.TimeZone == "" || d.TimeZone == "Local" {
		return app
	}
	if loc, err := loadLocation(d.TimeZone); err == nil {
		return loc
	}
	return app
}
