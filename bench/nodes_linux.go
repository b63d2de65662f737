package bench

import (
	"os/exec"
	"syscall"
)

// dieWithBench has the kernel kill the node when the bench process dies
// in a way that runs none of its clean-up (SIGKILL, a crash), so that no
// server is left running. The signal follows the thread that started the
// node; Go ends no thread of its pool unless a goroutine locked to it
// exits, which the bench never does.
func dieWithBench(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
