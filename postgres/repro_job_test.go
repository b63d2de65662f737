package postgres_test

// reproJob is a job of the kind named, for the reproductions' pushes
// (never run).
type reproJob struct{ kind string }

func (j reproJob) Kind() string { return j.kind }
