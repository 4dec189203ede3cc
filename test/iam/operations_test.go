// Package iam checks the controller's IAM policy files in deploy/iam against the code:
// they parse, have an IAM policy document's shape, agree with each other and with the
// docs, and allow every AWS API operation the AWS provider calls. The operations are
// found in the provider's source with the Go type checker, not read from the policy or
// from a list kept by hand.
package iam

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratos-sh/stratos/test/harness"
)

// providerPackage is the package whose AWS calls the controller's policy must allow.
const providerPackage = "github.com/stratos-sh/stratos/internal/cloudprovider/aws"

// sdkService matches an aws-sdk-go-v2 service package; its last element is the service.
var sdkService = regexp.MustCompile(`^github\.com/aws/aws-sdk-go-v2/service/([a-z0-9]+)$`)

// actionPrefix is the IAM service prefix of each SDK service package the provider may
// use. An SDK operation's name is its IAM action's name for these services, but for
// the batches of batchActions. A service
// missing here fails the test, so that a new client is mapped deliberately.
var actionPrefix = map[string]string{
	"ec2": "ec2", "iam": "iam", "ssm": "ssm", "pricing": "pricing", "eks": "eks", "sqs": "sqs", "sts": "sts",
}

// batchActions are the SDK operations whose IAM action is another's: SQS authorises a
// batch as the action it batches.
var batchActions = map[string]string{
	"sqs:DeleteMessageBatch":           "sqs:DeleteMessage",
	"sqs:SendMessageBatch":             "sqs:SendMessage",
	"sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
}

// goPackage is what go list says of a package.
type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// listWithExports lists the provider package and its dependencies with their compiled
// export data (go list -export builds what the cache lacks).
func listWithExports(t *testing.T, root string) (provider goPackage, exports map[string]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", providerPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", providerPackage, err)
	}
	exports = map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == providerPackage {
			provider = p
		}
	}
	if provider.ImportPath == "" {
		t.Fatalf("go list did not list %s", providerPackage)
	}
	return provider, exports
}

// typeCheckProvider type-checks the provider's non-test files against its dependencies'
// export data.
func typeCheckProvider(t *testing.T) (*types.Package, *types.Info) {
	t.Helper()
	provider, exports := listWithExports(t, repoRoot(t))
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range provider.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(provider.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(providerPackage, fset, files, info)
	if err != nil {
		t.Fatalf("type-checking %s: %v", providerPackage, err)
	}
	return pkg, info
}

// sdkClientService is the service of an SDK client type (*ec2.Client → ec2), or "".
func sdkClientService(typ types.Type) string {
	if ptr, ok := typ.(*types.Pointer); ok {
		typ = ptr.Elem()
	}
	named, ok := typ.(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Name() != "Client" {
		return ""
	}
	if m := sdkService.FindStringSubmatch(named.Obj().Pkg().Path()); m != nil {
		return m[1]
	}
	return ""
}

// sdkPaginator matches the SDK's paginator constructors, which call their operation.
var sdkPaginator = regexp.MustCompile(`^New([A-Za-z0-9]+)Paginator$`)

// calledOperations are the IAM actions of the AWS API operations the provider calls: a
// method of an SDK client (called or taken as a value) or a paginator made over one.
// The SDK clients the provider keeps are returned too, by service.
func calledOperations(t *testing.T) (actions []string, clients []string) {
	t.Helper()
	found.once.Do(func() { found.actions, found.clients, found.err = findOperations(t) })
	if found.err != "" {
		t.Fatal(found.err)
	}
	if len(found.actions) == 0 { // the first test to look failed, or found nothing
		t.Fatal("found no AWS operations the provider calls")
	}
	return found.actions, found.clients
}

// found caches what findOperations found: type-checking the provider takes seconds.
var found struct {
	once             sync.Once
	actions, clients []string
	err              string
}

func findOperations(t *testing.T) (actions []string, clients []string, failure string) {
	t.Helper()
	pkg, info := typeCheckProvider(t)
	seen := map[string]bool{}
	add := func(service, operation string) {
		prefix, ok := actionPrefix[service]
		if !ok {
			failure = fmt.Sprintf("the provider calls %s.%s of SDK service %q, which this test does not map to an IAM prefix: add it to actionPrefix", service, operation, service)
			return
		}
		action := prefix + ":" + operation
		if batched, ok := batchActions[action]; ok {
			action = batched
		}
		seen[action] = true
	}
	for sel, selection := range info.Selections {
		if selection.Kind() != types.MethodVal {
			continue
		}
		service := sdkClientService(selection.Recv())
		if service == "" || sel.Sel.Name == "Options" { // Options reads the client's settings, no call
			continue
		}
		add(service, sel.Sel.Name)
	}
	for ident, obj := range info.Uses {
		fn, ok := obj.(*types.Func)
		if !ok || fn.Pkg() == nil {
			continue
		}
		m := sdkService.FindStringSubmatch(fn.Pkg().Path())
		if m == nil {
			continue
		}
		if p := sdkPaginator.FindStringSubmatch(ident.Name); p != nil {
			add(m[1], p[1])
		} else if strings.HasSuffix(ident.Name, "Waiter") {
			failure = fmt.Sprintf("the provider uses the SDK waiter %s.%s: map the operations it polls in this test", m[1], ident.Name)
		}
	}
	// The clients the provider keeps: its Clients struct's fields of SDK client types.
	if obj := pkg.Scope().Lookup("Clients"); obj != nil {
		if st, ok := obj.Type().Underlying().(*types.Struct); ok {
			for field := range st.Fields() {
				if service := sdkClientService(field.Type()); service != "" {
					clients = append(clients, service)
				}
			}
		}
	}
	for action := range seen {
		actions = append(actions, action)
	}
	slices.Sort(actions)
	slices.Sort(clients)
	return actions, clients, failure
}

// The extraction finds the calls of every client the provider keeps; one whose client
// shows no call would mean the extraction misses a way the code calls AWS.
func TestEveryProviderClientHasCalls(t *testing.T) {
	actions, clients := calledOperations(t)
	if len(clients) == 0 {
		t.Fatal("found no SDK clients in the provider's Clients struct")
	}
	for _, service := range clients {
		prefix := actionPrefix[service]
		if !slices.ContainsFunc(actions, func(a string) bool { return strings.HasPrefix(a, prefix+":") }) {
			t.Errorf("the provider keeps a %s client but no call of it was found (found %v)", service, actions)
		}
	}
	t.Logf("the provider calls %d operations: %s", len(actions), strings.Join(actions, ", "))
}
