package main

import (
	"fmt"
	"io"
)

// runMigrate is "stratos migrate": Karpenter NodePools and EC2NodeClasses in, Stratos
// objects out (docs/migrating.md).
func runMigrate(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "stratos migrate: not built yet")
	return 1
}
