package cli

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
)

// buildInfo is what a binary knows of its own build: the module version,
// the VCS commit it was built from and whether the tree had local
// changes, and the Go version. A field that the build did not record is
// empty (a binary built by `go test`, or outside a repository, has no
// commit).
type buildInfo struct {
	version  string // "v1.2.3", or "(devel)" for a build from a checkout
	commit   string
	time     string // the commit's time, RFC 3339
	modified bool
	goVer    string
}

// readBuildInfo reads the build information Go embeds in the binary.
func readBuildInfo() buildInfo {
	b := buildInfo{version: "(unknown)", goVer: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := info.Main.Version; v != "" {
		b.version = v
	}
	if info.GoVersion != "" {
		b.goVer = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.commit = s.Value
		case "vcs.time":
			b.time = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// String renders the build on one line:
// "parley (devel) commit 137c20c… (modified) go1.26.8 linux/amd64".
func (b buildInfo) String() string {
	s := "parley " + b.version
	if b.commit != "" {
		s += " commit " + b.commit
		switch {
		case b.modified && b.time != "":
			s += " (" + b.time + ", modified)"
		case b.modified:
			s += " (modified)"
		case b.time != "":
			s += " (" + b.time + ")"
		}
	} else {
		s += " commit unknown"
	}
	return s + " " + b.goVer + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// versionSynopsis is the usage line and the notes of `parley version -h`.
const versionSynopsis = `version

Prints the module version, the VCS commit the binary was built from (and
whether the tree had local changes), the Go version and the platform.
parley serve logs the same at start-up.`

// versionCmd runs `parley version` (also `parley --version`).
func versionCmd(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprintf(stdout, "%s\n", readBuildInfo())
		return ExitOK
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		writeHelp(stdout, "version", versionSynopsis, "", nil)
		return ExitOK
	}
	fmt.Fprintf(stderr, "parley version: unexpected argument %q\n", args[0])
	return ExitUsage
}

// logBuild logs the build at start-up, on one info line.
func logBuild(log *slog.Logger) {
	b := readBuildInfo()
	commit := b.commit
	if commit == "" {
		commit = "unknown"
	}
	log.Info("parley", "version", b.version, "commit", commit, "modified", b.modified, "go", b.goVer)
}
