package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
)

// flagGroup is one titled part of a command's flag list in its help.
type flagGroup struct {
	title string
	flags []string // flag names without dashes; the help sorts them
}

// otherFlagsTitle heads the flags that no group names. The serve help
// never shows it: TestServeFlagGroups fails while a flag is left out.
const otherFlagsTitle = "other"

// flagGroups holds, for the commands whose help lists their flags by
// group, the groups in the order the help shows them. It is the one place
// a new flag of `parley serve` must be added to.
var flagGroups = map[string][]flagGroup{
	"serve": {
		{"agent (what answers the messages)", []string{
			"agent", "exec", "exec-format", "chunk", "exec-timeout", "exec-concurrency", "exec-env",
			"exec-grace", "exec-max-output", "proxy", "proxy-binding", "proxy-header", "proxy-token",
			"proxy-token-file", "mcp", "mcp-call-timeout", "mcp-env", "extended-card",
		}},
		{"agent shape (what the card declares, for conformance kits)", []string{
			"capabilities", "require-extension",
		}},
		{"network (listeners, TLS, the addresses the card gives)", []string{
			"addr", "grpc-addr", "grpc-reflection", "public-url", "protocol-versions", "tls-cert", "tls-key",
			"keep-alive", "long-poll-timeout", "allowed-host", "cors-origin",
		}},
		{"storage (where tasks are kept, and for how long)", []string{
			"store", "retention", "resume-window", "idempotency-window", "max-tasks", "max-messages", "lease", "store-timeout",
		}},
		{"authentication and identity", []string{
			"auth-token", "auth-token-file", "allow-anonymous", "api-keys", "jwt-issuer", "jwt-jwks-url",
			"jwt-audience", "jwt-principal-claim", "jwt-rights-claim", "jwks-refresh", "tls-client-ca", "tls-client-auth",
			"tls-client-rights",
			"sign-card-key", "sign-card-kid", "sign-card-jku",
		}},
		{"push notifications", []string{
			"push", "push-allow-private", "push-allow-host", "push-timeout", "push-max-failures",
			"push-host-rate", "push-host-burst",
			"push-key-file", "new-push-key",
		}},
		{"limits (connections, requests, callers)", []string{
			"max-conns", "max-conns-per-ip", "max-pending-anonymous", "max-body", "body-budget", "body-timeout",
			"write-timeout", "rate-limit", "rate-burst", "max-calls", "max-streams", "answer-budget", "task-rate", "task-burst", "max-open-tasks",
			"max-parts", "max-id-bytes", "max-metadata-bytes", "max-push-configs", "max-push-url-bytes",
			"max-push-secret-bytes",
		}},
		{"logs, metrics and shutdown", []string{
			"log-level", "metrics-addr", "shutdown-timeout",
		}},
	},
}

// writeGroupedFlags lists the flags of fs under the headings of groups,
// each group in name order and written as writeFlags writes a flag. A flag
// that no group names goes under a last heading, otherFlagsTitle, so that
// the help still shows it; a name of groups that fs lacks is skipped.
func writeGroupedFlags(w io.Writer, fs *flag.FlagSet, groups []flagGroup) {
	placed := make(map[string]bool)
	for _, g := range groups {
		var flags []*flag.Flag
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil && !placed[name] {
				placed[name] = true
				flags = append(flags, f)
			}
		}
		writeFlagGroup(w, g.title, flags)
	}
	var rest []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !placed[f.Name] {
			rest = append(rest, f)
		}
	})
	writeFlagGroup(w, otherFlagsTitle, rest)
}

// writeFlagGroup writes a heading and then flags, sorted by name; nothing
// when flags is empty.
func writeFlagGroup(w io.Writer, title string, flags []*flag.Flag) {
	if len(flags) == 0 {
		return
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, f := range flags {
		writeFlag(w, f)
	}
}
