// compose-check loads a Compose file with compose-go, the library behind `docker compose
// config`: schema validation, interpolation, extends/anchors and normalisation. It prints the
// resolved project as YAML, or the error and exit status 1. It needs no Docker engine.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-check docker-compose.yml")
		os.Exit(2)
	}
	options, err := cli.NewProjectOptions(
		[]string{os.Args[1]}, cli.WithOsEnv, cli.WithDotEnv, cli.WithName("mnemo"),
	)
	if err != nil {
		fail(err)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	out, err := project.MarshalYAML()
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "invalid compose file:", err)
	os.Exit(1)
}
