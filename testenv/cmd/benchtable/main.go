// Command benchtable prints the cost table (docs/internals/costs.md) from standard Go
// benchmark output: each row's goal, zonestream's figure, the reference it
// is compared with (ExternalDNS measured in the same run where it has a
// benchmark of its own, else the figure the goal names) and whether the
// goal is met. hack/bench-table.sh runs the benchmarks and calls it.
//
//	benchtable FILE...      (- for standard input)
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchtable FILE... (- for standard input)")
		os.Exit(2)
	}
	results := results{}
	for _, name := range os.Args[1:] {
		if err := read(name, results); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	print(os.Stdout, table(results))
}

func read(name string, into results) error {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	n, err := into.add(r)
	if err == nil && n == 0 {
		err = errors.New(name + ": no benchmark results")
	}
	return err
}
