package learned_test

import (
	"os"
	"testing"

	"github.com/stratos-sh/stratos/test/harness"
)

// The tests share API servers, one per test running at once, swept clean between tests
// (harness.RunShared).
func TestMain(m *testing.M) { os.Exit(harness.RunShared(m)) }
