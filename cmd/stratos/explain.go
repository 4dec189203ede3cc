package main

import (
	"fmt"
	"io"
)

// runExplain is "stratos explain pod NAME": why a pod is pending, or how it got its node
// (docs/troubleshooting.md).
func runExplain(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "stratos explain: not built yet")
	return 1
}
