package main

import (
	"io"
	"os"

	"github.com/stratos-sh/stratos/internal/migrate/cli"
)

// runMigrate is "stratos migrate": Karpenter NodePools and EC2NodeClasses in, Stratos
// objects out (docs/migrating.md).
func runMigrate(args []string, stdout, stderr io.Writer) int {
	return cli.Run(args, os.Stdin, stdout, stderr)
}
