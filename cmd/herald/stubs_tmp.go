package main

import (
	"context"
	"errors"
	"io"
)

func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("todo")
}
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("todo")
}
func runApp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return errors.New("todo")
}
