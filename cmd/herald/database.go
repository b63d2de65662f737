package main

import "path/filepath"

// sqlitePath is the embedded store's file in the data dir.
func (c *config) sqlitePath() string { return filepath.Join(c.DataDir, "herald.db") }
