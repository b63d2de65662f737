package sqlite

import "github.com/heraldpush/herald"

var (
	_ herald.AppStore       = (*DB)(nil)
	_ herald.UserStore      = (*DB)(nil)
	_ herald.PushStore      = (*DB)(nil)
	_ herald.DeliveryStore  = (*DB)(nil)
	_ herald.HistoryStore   = (*DB)(nil)
	_ herald.ScheduleStore  = (*DB)(nil)
	_ herald.MasterKeyStore = (*DB)(nil)
)
