package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"
)

const configSynopsis = `config show [-a AGENT] [flags]

Prints each option of the client commands with the value a command run
here would use, and where it comes from (A2A CLI SPEC §8.3): "flag",
"$A2ACLI_…" (the environment), "A2ACLI_… in FILE" (a .env file:
~/.config/a2a-cli/.env, then the nearest .env from the working directory
up, or --config FILE instead), or "default". Credentials show as
[REDACTED]. It reads; it changes nothing: set the variables, or edit or
remove the files, to change the settings. The tokens of parley auth
login are listed too, as auth-login lines (each agent's flow and expiry,
and its file; remove the file to sign out).`

// configCmd runs `parley config show`.
func configCmd(ctx context.Context, e *env, args []string) error {
	sub, args := splitSubcommand(args)
	e.name = strings.TrimSpace("config " + sub)
	fs, c := e.newFlags(configSynopsis, true)
	addSendFlags(fs) // the variables set send's options too
	if sub != "show" {
		return usageError{fmt.Errorf("want config show")}
	}
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, 1); err != nil {
		return err
	}
	type setting struct {
		Value  string `json:"value"`
		Source string `json:"source"`
	}
	settings := map[string]setting{}
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if !configurable(f.Name) {
			return
		}
		src := c.from[f.Name]
		if src == "" {
			src = "default"
		}
		settings[f.Name] = setting{c.shown(f), src}
		names = append(names, f.Name)
	})
	// The tokens of parley auth login are persisted too (SPEC §8.3: what
	// is persisted is shown by config show): each agent's flow and expiry,
	// its file as the source (never the token itself). In text, one
	// "auth-login: AGENT, …" line each; in JSON, "auth-login AGENT" keys.
	var logins []string
	for _, l := range storedLogins() {
		exp := "no expiry"
		if !l.login.Token.Expiry.IsZero() {
			exp = "expires " + l.login.Token.Expiry.UTC().Format(time.RFC3339)
		}
		v := fmt.Sprintf("%s, %s, scheme %s", l.login.Flow, exp, l.login.Scheme)
		settings["auth-login "+l.login.Agent] = setting{v, l.path}
		logins = append(logins, fmt.Sprintf("auth-login: %s, %s (%s)\n", l.login.Agent, v, l.path))
	}
	if c.json {
		b, err := json.Marshal(settings)
		if err != nil {
			return err
		}
		e.out.printf("%s\n", b)
		return nil
	}
	for _, n := range names {
		s := settings[n]
		e.out.printf("%s: %s (%s)\n", n, s.Value, s.Source)
	}
	e.out.printf("%s", strings.Join(logins, ""))
	return nil
}

// configurable reports whether an option may come from a variable: a
// long flag, not an alias, not one noEnv excludes.
func configurable(name string) bool {
	if len(name) == 1 || noEnv[name] {
		return false
	}
	for _, aliases := range aliasOf {
		for _, a := range aliases {
			if a == name {
				return false
			}
		}
	}
	return true
}

// hiddenOptions are the options config show never prints.
var hiddenOptions = map[string]bool{"bearer": true, "api-key": true, "svc-param": true, "push-token": true}

// shown is the value of f as config show prints it.
func (c *common) shown(f *flag.Flag) string {
	v := f.Value.String()
	switch f.Name {
	case "output":
		v = "text"
		if c.json {
			v = "json"
		}
	case "transport":
		v = strings.Join(c.prefer, ",")
	case "svc-param":
		v = strings.Join(c.svcParams, ",")
	}
	if hiddenOptions[f.Name] && v != "" {
		return redacted
	}
	return v
}
