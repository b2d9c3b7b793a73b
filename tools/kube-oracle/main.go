// Command kube-oracle runs kube-scheduler 1.37.2's own framework on a cluster given as manifests and
// prints, per pending pod, what kube decided: Filter verdicts per node, weighted scores, the PreFilter
// result, the FailedScheduling message, the chosen node and the equally good ones, and preemption.
// The output is the result document of the differential contract (/work/prompts/diff-contract.md).
//
//	kube-oracle [--mode cycle|run] [--config FILE] [-v N] PATH...
//	kube-oracle serve [-v N]    one JSON request per stdin line, one JSON answer per stdout line
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/klog/v2"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	serve := len(args) > 0 && args[0] == "serve"
	if serve {
		args = args[1:]
	}
	fs := flag.NewFlagSet("kube-oracle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "cycle", "cycle (one scheduling cycle per pending pod) or run (the whole scheduler)")
	configPath := fs.String("config", "", "KubeSchedulerConfiguration file (YAML or JSON); default: kube's defaults")
	plugins := fs.String("plugins", "", "comma-separated: the only plugins the profiles keep (default: all)")
	verbosity := fs.Int("v", 0, "klog verbosity; logs go to stderr and are silenced at 0")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kube-oracle [--mode cycle|run] [--config FILE] [--plugins A,B] [-v N] PATH...\n       kube-oracle serve [-v N]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := setUp(*verbosity, stderr); err != nil {
		fmt.Fprintln(stderr, "kube-oracle:", err)
		return 1
	}
	if serve {
		if fs.NArg() > 0 || *configPath != "" {
			fmt.Fprintln(stderr, "kube-oracle serve: takes no paths or --config; they come with each request")
			return 2
		}
		if err := Serve(stdin, stdout); err != nil {
			fmt.Fprintln(stderr, "kube-oracle serve:", err)
			return 1
		}
		return 0
	}
	if *mode != "cycle" && *mode != "run" {
		fmt.Fprintf(stderr, "kube-oracle: --mode: %q is neither cycle nor run\n", *mode)
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	var allowed []string
	if *plugins != "" {
		allowed = strings.Split(*plugins, ",")
	}
	result, err := runFiles(*mode, *configPath, allowed, fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "kube-oracle:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(result); err != nil {
		fmt.Fprintln(stderr, "kube-oracle:", err)
		return 1
	}
	return 0
}

func runFiles(mode, configPath string, allowed []string, paths []string) (*Result, error) {
	docs, sources, err := ReadManifests(paths)
	if err != nil {
		return nil, err
	}
	var config json.RawMessage
	if configPath != "" {
		data, err := os.ReadFile(configPath)
		if err != nil {
			return nil, err
		}
		if config, err = utilyaml.ToJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", configPath, err)
		}
	}
	c, err := DecodeCase(docs, sources, config)
	if err != nil {
		return nil, err
	}
	RestrictPlugins(c.Config, allowed)
	return Evaluate(c, mode)
}

// Evaluate runs one case in a mode on a scheduler of its own.
func Evaluate(c *Case, mode string) (*Result, error) {
	o, err := newOracle(c, mode)
	if err != nil {
		return nil, err
	}
	defer o.close()
	return o.Run()
}

// setUp sets the contract's feature gates and klog's verbosity (0: silent).
func setUp(verbosity int, stderr io.Writer) error {
	if err := setFeatureGates(); err != nil {
		return err
	}
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if verbosity <= 0 {
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
		klog.LogToStderr(false)
		return nil
	}
	_ = klogFlags.Set("v", fmt.Sprint(verbosity))
	klog.SetOutput(stderr)
	return nil
}
