// Command jsongen writes the JSON encoders of the current package's
// documents (package jsongen), for go:generate:
//
//	//go:generate go run github.com/edge-stats/edge/internal/jsonw/jsongen/cmd/jsongen -out documents_json.go Listing LegacyRow
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/edge-stats/edge/internal/jsonw/jsongen"
)

func main() {
	out := flag.String("out", "", "the file to write the encoders to")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: jsongen -out file.go Type...")
		os.Exit(2)
	}
	src, err := jsongen.Generate(".", flag.Args())
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
