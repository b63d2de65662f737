package postgres_test

type reproJob struct{ kind string }

func (j reproJob) Kind() string { return j.kind }
