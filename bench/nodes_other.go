//go:build !linux

package bench

import "os/exec"

// dieWithBench does nothing here: only Linux kills a child with its
// parent. The bench's own clean-up (normal exit, error, Ctrl-C, SIGTERM)
// still stops the nodes.
func dieWithBench(cmd *exec.Cmd) {}
