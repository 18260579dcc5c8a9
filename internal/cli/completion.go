package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// completionWords are the words `parley completion` completes: the
// commands, and for each client command (and subcommand) its flags, read
// from the flag sets the commands themselves define, so that the scripts
// never fall behind.
func completionWords() (commands []string, flags map[string][]string) {
	commands = []string{"card", "send", "task", "config", "push", "check", "conformance", "mcp", "completion",
		"serve", "webhook", "inspect", "load", "key", "apikey", "version", "help"}
	flags = map[string][]string{}
	names := func(fs *flag.FlagSet) []string {
		var out []string
		fs.VisitAll(func(f *flag.Flag) {
			if len(f.Name) > 1 {
				out = append(out, "--"+f.Name)
			} else {
				out = append(out, "-"+f.Name)
			}
		})
		sort.Strings(out)
		return out
	}
	e := &env{stdout: io.Discard, stderr: io.Discard}
	fs, _ := e.newFlags("", true)
	addSendFlags(fs)
	flags["send"] = names(fs)
	for _, sub := range []string{"get", "list", "cancel", "subscribe", "download"} {
		fs, _ := e.newFlags("", true)
		addTaskFlags(fs, sub)
		flags["task "+sub] = names(fs)
	}
	for _, sub := range []string{"create", "get", "list", "delete"} {
		fs, _ := e.newFlags("", true)
		addPushCmdFlags(fs, sub)
		flags["task push-config "+sub] = names(fs)
	}
	fs, _ = e.newFlags("", true)
	addVerifyFlags(fs)
	flags["card get"] = append(names(fs), "--validate")
	fs, _ = e.newFlags("", true)
	flags["config show"] = names(fs)
	return commands, flags
}

// completionCmd runs `parley completion bash|zsh|fish`: it prints a
// completion script for the shell (A2A CLI SPEC §7.1).
func completionCmd(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		writeHelp(stdout, "completion", `completion bash|zsh|fish

Prints a script that completes parley's commands, subcommands and flags
in the shell named.`, "", nil)
		return flag.ErrHelp
	}
	if len(args) != 1 {
		return usageError{fmt.Errorf("want parley completion bash, zsh or fish")}
	}
	commands, flags := completionWords()
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	switch args[0] {
	case "bash", "zsh":
		var b strings.Builder
		if args[0] == "zsh" {
			b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
		}
		b.WriteString("# parley completion: source this file (parley completion " + args[0] + " > ~/.parley-completion; . ~/.parley-completion)\n")
		b.WriteString("_parley() {\n  local cur=${COMP_WORDS[COMP_CWORD]} path=\"\" w i\n")
		b.WriteString("  for ((i = 1; i < COMP_CWORD; i++)); do w=${COMP_WORDS[i]}; [[ $w == -* ]] && break; path=\"${path:+$path }$w\"; done\n")
		b.WriteString("  if ((COMP_CWORD == 1)); then COMPREPLY=($(compgen -W \"" + strings.Join(commands, " ") + "\" -- \"$cur\")); return; fi\n")
		b.WriteString("  local words=\"\"\n  case \"$path\" in\n")
		subs := map[string][]string{}
		for _, k := range keys {
			b.WriteString(fmt.Sprintf("    \"%s\"*) words=\"%s\" ;;\n", k, strings.Join(flags[k], " ")))
			// Each word after the first is a subcommand of the words before it.
			w := strings.Fields(k)
			for i := 1; i < len(w); i++ {
				parent := strings.Join(w[:i], " ")
				subs[parent] = appendNew(subs[parent], w[i])
			}
		}
		skeys := make([]string, 0, len(subs))
		for k := range subs {
			skeys = append(skeys, k)
		}
		sort.Strings(skeys)
		for _, k := range skeys {
			b.WriteString(fmt.Sprintf("    \"%s\") words=\"%s\" ;;\n", k, strings.Join(subs[k], " ")))
		}
		b.WriteString("  esac\n  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _parley parley\n")
		_, err := io.WriteString(stdout, b.String())
		return err
	case "fish":
		var b strings.Builder
		b.WriteString("# parley completion: parley completion fish > ~/.config/fish/completions/parley.fish\n")
		b.WriteString("complete -c parley -f -n __fish_use_subcommand -a '" + strings.Join(commands, " ") + "'\n")
		for _, k := range keys {
			words := strings.Fields(k)
			cond := "__fish_seen_subcommand_from " + words[len(words)-1]
			if len(words) > 1 {
				cond = "__fish_seen_subcommand_from " + words[0] + "; and __fish_seen_subcommand_from " + words[len(words)-1]
			}
			for _, f := range flags[k] {
				if strings.HasPrefix(f, "--") {
					b.WriteString(fmt.Sprintf("complete -c parley -n '%s' -l %s\n", cond, strings.TrimPrefix(f, "--")))
				} else {
					b.WriteString(fmt.Sprintf("complete -c parley -n '%s' -s %s\n", cond, strings.TrimPrefix(f, "-")))
				}
			}
		}
		_, err := io.WriteString(stdout, b.String())
		return err
	}
	return usageError{fmt.Errorf("completion %q: want bash, zsh or fish", args[0])}
}

// appendNew appends s to list unless it holds it.
func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
