// Command herald is Herald's one binary: the service (serve), its schema
// (migrate), the FCM emulator, the benchmark and operator commands. serve
// fills server.Config from its flags and HERALD_* variables and starts the
// node with server.New, which assembles it as the tests do.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // app time zones must resolve on machines without a zoneinfo database
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

// run is the whole program, with its environment passed in so that tests
// can drive it. A command's --help is a success.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], getenv, stdout, stderr)
	case "restore":
		return runRestore(ctx, args[1:], getenv, stdout, stderr)
	case "fcm-emulator":
		return runEmulator(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "app":
		return runApp(ctx, args[1:], getenv, stdout, stderr)
	case "operator":
		return runOperator(ctx, args[1:], getenv, stdout, stderr)
	case "audit":
		return runAudit(ctx, args[1:], getenv, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], getenv, stdout)
	case "version":
		return runVersion(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return dispatch(ctx, append(args[1:], "--help"), getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, usageText())
		return nil
	}
	fmt.Fprint(stderr, usageText())
	return fmt.Errorf("unknown command %q", args[0])
}
