package main

import (
	"testing"

	"github.com/heraldpush/herald"
)

// TestRetentionDaysConfig: HERALD_RETENTION_DAYS and --retention-days
// default to 400 days and take a whole number of at least 31; anything
// else stops serve naming the setting as given.
func TestRetentionDaysConfig(t *testing.T) {
	t.Parallel()
	testWholeNumberSetting(t, "HERALD_RETENTION_DAYS", "--retention-days", (*config).retentionDays,
		[]settingCase{{"", nil, herald.DefaultRetentionDays}, {"31", nil, 31}, {"3650", nil, 3650},
			{"500", []string{"--retention-days", "90"}, 90}},
		[]string{"30", "0", "-400", "400.5", "a year", "4e2"})
}
