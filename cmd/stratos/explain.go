package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/explain"
	"github.com/stratos-sh/stratos/internal/scheme"
)

const explainUsage = `Usage: stratos explain pod NAME [-n NAMESPACE] [--kubeconfig FILE] [--context NAME] [-o text|json]

Tells why a pod is pending — what kube-scheduler said, whether Stratos looks for capacity
for it, the claim it placed it on or why no NodePool can take it, and what holds
capacity back — or, for a pod with a node, the node, its NodeClaim and NodePool, the path
that served it (standby, cold, existing) and how long it took to be scheduled, running
and Ready. It reads what the cluster recorded; it changes nothing.
`

// explainTimeout bounds the reads of one explanation.
const explainTimeout = 30 * time.Second

// runExplain is "stratos explain pod NAME": why a pod is pending, or how it got its node
// (docs/troubleshooting.md).
func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stratos explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, explainUsage, "\nFlags:\n")
		fs.PrintDefaults()
	}
	var namespace, kubeconfig, kubecontext, output string
	for _, name := range []string{"n", "namespace"} {
		fs.StringVar(&namespace, name, "", "The pod's namespace; empty: the kubeconfig context's, else default.")
	}
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; empty: $KUBECONFIG, else ~/.kube/config, else the in-cluster config.")
	fs.StringVar(&kubecontext, "context", "", "The kubeconfig context to use; empty: its current one.")
	for _, name := range []string{"o", "output"} {
		fs.StringVar(&output, name, "text", "Output format: text or json.")
	}
	positional, err := parseInterleaved(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, explainUsage, "\nFlags:\n")
		fs.PrintDefaults()
		return 0
	case err != nil:
		return 2
	case len(positional) != 2 || positional[0] != "pod":
		fmt.Fprintf(stderr, "stratos explain: want \"pod NAME\", got %q\nRun 'stratos explain --help' for the usage.\n", positional)
		return 2
	case output != "text" && output != "json":
		fmt.Fprintf(stderr, "stratos explain: -o must be text or json, not %q\n", output)
		return 2
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: kubecontext}
	overrides.Context.Namespace = namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "stratos explain: loading the kubeconfig: %v\n", err)
		return 1
	}
	if namespace, _, err = loader.Namespace(); err != nil {
		fmt.Fprintf(stderr, "stratos explain: reading the namespace from the kubeconfig: %v\n", err)
		return 1
	}
	cfg.UserAgent = "stratos-explain"
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		fmt.Fprintf(stderr, "stratos explain: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), explainTimeout)
	defer cancel()
	now := time.Now()
	facts, err := explain.Read(ctx, c, types.NamespacedName{Namespace: namespace, Name: positional[1]}, now)
	if err != nil {
		fmt.Fprintf(stderr, "stratos explain: %v\n", err)
		return 1
	}
	e := explain.Explain(facts)
	if output == "json" {
		err = explain.WriteJSON(stdout, e)
	} else {
		err = explain.WriteText(stdout, e, now)
	}
	if err != nil {
		fmt.Fprintf(stderr, "stratos explain: %v\n", err)
		return 1
	}
	return 0
}

// parseInterleaved parses flags wherever they stand among the arguments, as kubectl
// does ("pod web -n shop" as well as "-n shop pod web"), and returns the others in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
