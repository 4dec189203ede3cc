// Package cli is "stratos migrate": its flags, its inputs (files, standard input or a
// cluster) and its outputs. The conversion itself is package migrate's.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stratos-sh/stratos/internal/migrate"
)

// DefaultStandby is the warm pool --standby proposes without a number: one node per
// pool, the smallest that serves a first pod from standby.
const DefaultStandby = 1

const usage = `Usage: stratos migrate [flags]

Converts Karpenter NodePools (karpenter.sh/v1, v1beta1) and EC2NodeClasses
(karpenter.k8s.aws/v1, v1beta1) into Stratos's (stratos.sh/v1beta1), and reports every
field it cannot carry over or carries with a change of meaning, and every workload
whose pods use Karpenter's labels. Without -f it reads the cluster of the kubeconfig.

Exit status: 0 converted (the report may have entries), 1 failed, 2 bad flags.

Flags:
`

// options are the parsed flags.
type options struct {
	files        []string
	kubeconfig   string
	outputDir    string
	reportFile   string
	reportFormat string
	standby      standbyFlag
}

// Run is "stratos migrate" with its arguments; stdin is read for "-f -".
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "stratos migrate: %v\nRun 'stratos migrate --help' for the flags.\n", err)
		return 2
	}
	objects, err := read(opts, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "stratos migrate: %v\n", err)
		return 1
	}
	res := migrate.Convert(objects, migrate.Options{Standby: opts.standby.value()})
	if res.KarpenterObjects == 0 && len(res.Report.Workloads) == 0 {
		fmt.Fprintln(stderr, "stratos migrate: the input has no Karpenter NodePool or EC2NodeClass, and no workload that uses Karpenter's labels: nothing to convert")
		_ = writeReport(opts, res, stderr)
		return 1
	}
	if err := writeObjects(opts, res, stdout); err != nil {
		fmt.Fprintf(stderr, "stratos migrate: %v\n", err)
		return 1
	}
	if err := writeReport(opts, res, stderr); err != nil {
		fmt.Fprintf(stderr, "stratos migrate: %v\n", err)
		return 1
	}
	return 0
}

func parse(args []string, stderr io.Writer) (*options, error) {
	opts := &options{}
	fs := flag.NewFlagSet("stratos migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	files := stringList{values: &opts.files}
	fs.Var(files, "f", "a Karpenter manifest: a file, a folder of .yaml, .yml and .json files, or - for standard input; repeatable. Without it, the cluster is read")
	fs.Var(files, "filename", "the same as -f")
	fs.StringVar(&opts.kubeconfig, "kubeconfig", "", "the kubeconfig of the cluster to read when no -f is given (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&opts.outputDir, "o", "", "write each Stratos object to a file of this folder (ec2nodeclass-NAME.yaml, nodepool-NAME.yaml) instead of standard output")
	fs.StringVar(&opts.outputDir, "output-dir", "", "the same as -o")
	fs.StringVar(&opts.reportFile, "report", "", "write the report to this file instead of standard error")
	fs.StringVar(&opts.reportFormat, "report-format", "text", "the report's format: text or json")
	fs.Var(&opts.standby, "standby", fmt.Sprintf("propose a warm pool of N standby nodes on every pool (--standby=N; --standby alone proposes %d)", DefaultStandby))
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (give files with -f, and a number of standby nodes as --standby=N)", fs.Arg(0))
	}
	if opts.reportFormat != "text" && opts.reportFormat != "json" {
		return nil, fmt.Errorf("--report-format must be text or json, not %q", opts.reportFormat)
	}
	if len(opts.files) > 0 && opts.kubeconfig != "" {
		return nil, errors.New("give either -f or --kubeconfig: migrate reads files or a cluster, not both")
	}
	return opts, nil
}

// read returns the objects of the files, or of the cluster when there are none.
func read(opts *options, stdin io.Reader) ([]migrate.Object, error) {
	if len(opts.files) == 0 {
		return readCluster(opts.kubeconfig)
	}
	var objects []migrate.Object
	for _, name := range opts.files {
		if name == "-" {
			got, err := migrate.Decode(stdin, "stdin")
			if err != nil {
				return nil, err
			}
			objects = append(objects, got...)
			continue
		}
		files, err := manifestFiles(name)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			got, err := decodeFile(file)
			if err != nil {
				return nil, err
			}
			objects = append(objects, got...)
		}
	}
	return objects, nil
}

// manifestFiles is the file itself, or the manifests of a folder and its subfolders.
func manifestFiles(name string) ([]string, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if !info.IsDir() {
		return []string{name}, nil
	}
	var files []string
	err = filepath.WalkDir(name, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no .yaml, .yml or .json file", name)
	}
	return files, nil
}

func decodeFile(path string) ([]migrate.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return migrate.Decode(f, path)
}

func writeObjects(opts *options, res *migrate.Result, stdout io.Writer) error {
	if opts.outputDir == "" {
		return res.WriteYAML(stdout)
	}
	if err := os.MkdirAll(opts.outputDir, 0o755); err != nil {
		return err
	}
	write := func(kind, name string, obj any) error {
		data, err := migrate.ManifestYAML(obj)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(opts.outputDir, kind+"-"+name+".yaml"), data, 0o644)
	}
	for i := range res.EC2NodeClasses {
		if err := write("ec2nodeclass", res.EC2NodeClasses[i].Name, &res.EC2NodeClasses[i]); err != nil {
			return err
		}
	}
	for i := range res.NodePools {
		if err := write("nodepool", res.NodePools[i].Name, &res.NodePools[i]); err != nil {
			return err
		}
	}
	return nil
}

func writeReport(opts *options, res *migrate.Result, stderr io.Writer) error {
	w := stderr
	if opts.reportFile != "" {
		f, err := os.Create(opts.reportFile)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if opts.reportFormat == "json" {
		return res.Report.WriteJSON(w)
	}
	return res.Report.WriteText(w)
}

// stringList is a repeatable string flag.
type stringList struct{ values *[]string }

func (s stringList) String() string {
	if s.values == nil {
		return ""
	}
	return strings.Join(*s.values, ",")
}

func (s stringList) Set(v string) error {
	if v == "" {
		return errors.New("an empty file name")
	}
	*s.values = append(*s.values, v)
	return nil
}

// standbyFlag is --standby, alone or with a number: a boolean flag to the flag package,
// so that "--standby" needs no value, which also reads --standby=N.
type standbyFlag struct {
	set bool
	n   int32
}

func (s *standbyFlag) IsBoolFlag() bool { return true }

func (s *standbyFlag) String() string {
	if s == nil || !s.set {
		return ""
	}
	return strconv.Itoa(int(s.n))
}

func (s *standbyFlag) Set(v string) error {
	switch v {
	case "true":
		s.set, s.n = true, DefaultStandby
		return nil
	case "false":
		s.set = false
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 || n > 10000 {
		return fmt.Errorf("--standby takes a number of nodes from 0 to 10000, not %q", v)
	}
	s.set, s.n = true, int32(n)
	return nil
}

func (s *standbyFlag) value() *int32 {
	if !s.set {
		return nil
	}
	n := s.n
	return &n
}
