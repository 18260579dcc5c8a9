package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options of the client commands may also come from the environment and
// from .env files (A2A CLI SPEC §7.2, §8.3): A2ACLI_ and the long flag in
// upper snake case (--agent-card: A2ACLI_AGENT_CARD). The order, highest
// first: the flag itself, the environment, the file --config names (else a
// .env found walking up from the working directory), the global file
// ~/.config/a2a-cli/.env, the built-in default.

// envPrefix starts the name of an option's environment variable.
const envPrefix = "A2ACLI_"

// noEnv are the flags no variable sets: --stream is explicit only (SPEC
// §11.3); -h is an action; aliases (Parley's older spellings) have no
// variable of their own, their canonical flag's does; and what belongs to
// one message (its parts and ids) is never a setting.
var noEnv = map[string]bool{
	"stream": true, "h": true, "help": true, "o": true, "a": true, "json": true,
	"token": true, "token-file": true, "binding": true, "header": true, "task": true, "context": true,
	"config": true, "watch": true,
	"text": true, "file": true, "data": true, "media-type": true, "message-id": true, "if-generation": true,
}

// envName is the variable of the flag name: --agent-card → A2ACLI_AGENT_CARD.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// source is where an option's value came from.
type source struct {
	vars map[string]string // A2ACLI_ variables of the files, merged
	from map[string]string // each variable's file
}

// configSources reads the .env files: global, then local (or explicit,
// which replaces the local one), the later overriding the earlier.
func configSources(explicit string) (*source, error) {
	s := &source{vars: map[string]string{}, from: map[string]string{}}
	if dir, err := configDir(); err == nil {
		if err := s.load(filepath.Join(dir, ".env"), false); err != nil {
			return nil, err
		}
	}
	if explicit != "" {
		return s, s.load(explicit, true)
	}
	if local := findLocalEnv(); local != "" {
		return s, s.load(local, false)
	}
	return s, nil
}

// findLocalEnv is the .env in the working directory or the nearest of its
// parents, or "".
func findLocalEnv() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, ".env")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// load reads the A2ACLI_ lines of the dotenv file at path (KEY=value, an
// optional "export ", # comments, values optionally quoted); other keys
// are ignored, as a project's .env holds other tools' settings too. A
// missing file is an error only when it was named (--config).
func (s *source) load(path string, named bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && !named {
		return nil
	}
	if err != nil {
		return usageError{fmt.Errorf("--config: %w", err)}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		k = strings.TrimSpace(k)
		if !ok {
			return usageError{fmt.Errorf("%s:%d: want KEY=value", path, n)}
		}
		if !strings.HasPrefix(k, envPrefix) {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		s.vars[k], s.from[k] = v, path
	}
	return sc.Err()
}

// warnLoose warns of each file holding a credential that other users may
// read (A2A CLI SPEC §8.3 wants secrets in files of mode 0600).
func (s *source) warnLoose(warn func(string)) {
	seen := map[string]bool{}
	for _, name := range []string{envName("bearer"), envName("api-key")} {
		if path := s.from[name]; path != "" && !seen[path] {
			seen[path] = true
			if w := looseWarning(name+" in", path); w != "" {
				warn(w)
			}
		}
	}
}

// applyConfig sets each flag of fs not given on the command line from its
// variable: the environment's, else the files' (getenv reads the
// environment), and records in from where each flag's value came from. A
// bad value is a usage error naming where it came from.
func applyConfig(fs *flag.FlagSet, src *source, getenv func(string) string, from map[string]string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		given[f.Name] = true
		from[f.Name] = "flag"
	})
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] || noEnv[f.Name] {
			return
		}
		for _, a := range aliasOf[f.Name] {
			if given[a] {
				return
			}
		}
		name := envName(f.Name)
		v, where := getenv(name), "$"+name
		if v == "" {
			if v = src.vars[name]; v == "" {
				return
			}
			where = name + " in " + src.from[name]
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = usageError{fmt.Errorf("%s=%q: %v", where, v, serr)}
		}
		from[f.Name] = where
	})
	return err
}

// givenAsFlag reports whether the command line set the canonical flag name,
// under that name or an alias of it.
func (c *common) givenAsFlag(name string) bool {
	if c.from[name] == "flag" {
		return true
	}
	for _, a := range aliasOf[name] {
		if c.from[a] == "flag" {
			return true
		}
	}
	return false
}

// aliasOf maps a canonical flag to the other spellings that set the same
// thing: given any on the command line, no variable applies.
var aliasOf = map[string][]string{
	"async": {"return-immediately", "no-wait"}, "agent-card": {"a"}, "output": {"o", "json"}, "bearer": {"token", "token-file"}, "task-id": {"task"},
	"context-id": {"context"}, "transport": {"binding"}, "wait": {"watch"},
}
