package sqlite

import (
	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var (
	_ herald.AppStore       = (*DB)(nil)
	_ herald.UserStore      = (*DB)(nil)
	_ herald.PushStore      = (*DB)(nil)
	_ sendstore.Store       = (*DB)(nil)
	_ herald.HistoryStore   = (*DB)(nil)
	_ herald.ScheduleStore  = (*DB)(nil)
	_ herald.MasterKeyStore = (*DB)(nil)
)
