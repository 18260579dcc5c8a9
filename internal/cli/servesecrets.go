package cli

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
)

// The environment variables `parley serve` reads secrets from.
const (
	// authTokensEnv holds bearer tokens as NAME=TOKEN entries separated
	// by white space, added to those of --auth-token and
	// --auth-token-file.
	authTokensEnv = "PARLEY_AUTH_TOKENS"
	// proxyTokenEnv holds the token sent to the --proxy agent when
	// neither --proxy-token nor --proxy-token-file is given.
	proxyTokenEnv = "PARLEY_PROXY_TOKEN"
)

// secretFlags are the `parley serve` flags that read secrets from files,
// and what they loaded.
type secretFlags struct {
	tokenFiles     multiFlag // --auth-token-file, repeatable
	proxyTokenFile string
	getenv         func(string) string // os.Getenv; tests replace it

	argv     []string              // the --auth-token values
	warnings []string              // told once a logger exists
	set      *a2ahttp.TokenSet     // the bearer tokens in force, swapped on SIGHUP
	rights   map[string]a2a.Rights // token → its rights, for the tokens given some, as loaded at start
}

// addSecretFlags registers the secret file flags on fs.
func addSecretFlags(fs *flag.FlagSet) *secretFlags {
	f := &secretFlags{getenv: os.Getenv}
	fs.Var(&f.tokenFiles, "auth-token-file", "enable bearer authentication with the principals in `FILE`, one NAME=TOKEN[:RIGHTS] a line (# comments; repeatable; "+
		"added to --auth-token and $"+authTokensEnv+"); SIGHUP re-reads it")
	fs.StringVar(&f.proxyTokenFile, "proxy-token-file", "", "like --proxy-token, with the token read from `FILE` (default: $"+proxyTokenEnv+")")
	return f
}

// tokens collects the bearer tokens (token → principal) of --auth-token
// (argv), $PARLEY_AUTH_TOKENS and every --auth-token-file, and keeps
// argv for reloads. Errors are usage errors.
func (f *secretFlags) tokens(argv []string) (map[string]string, error) {
	f.argv = argv
	m, rights, warnings, err := f.collect()
	if err != nil {
		return nil, usageError{err}
	}
	f.rights = rights
	f.warnings = append(f.warnings, warnings...)
	return m, nil
}

// collect reads every source of bearer tokens afresh: token → principal,
// and token → rights for the tokens given some. A token given to two
// principals is an error; a principal may have several tokens (to rotate
// one without a gap, or to hand out one with fewer rights). No error
// quotes a token.
func (f *secretFlags) collect() (map[string]string, map[string]a2a.Rights, []string, error) {
	m, rights := map[string]string{}, map[string]a2a.Rights{}
	add := func(where, v string) error {
		name, tok, r, err := parseTokenEntry(v)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if prev, ok := m[tok]; ok && prev != name {
			return fmt.Errorf("%s: principals %q and %q are given the same token", where, prev, name)
		}
		m[tok] = name
		if r != nil {
			rights[tok] = r
		}
		return nil
	}
	for _, v := range f.argv {
		if err := add("--auth-token", v); err != nil {
			return nil, nil, nil, err
		}
	}
	for i, v := range strings.Fields(f.getenv(authTokensEnv)) {
		if err := add(fmt.Sprintf("%s: entry %d", authTokensEnv, i+1), v); err != nil {
			return nil, nil, nil, err
		}
	}
	var warnings []string
	for _, file := range f.tokenFiles {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--auth-token-file: %w", err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, tok, _ := strings.Cut(line, "=")
			if err := add(fmt.Sprintf("--auth-token-file %s:%d", file, n+1), strings.TrimSpace(name)+"="+strings.TrimSpace(tok)); err != nil {
				return nil, nil, nil, err
			}
		}
		if w := looseWarning("--auth-token-file", file); w != "" {
			warnings = append(warnings, w)
		}
	}
	return m, rights, warnings, nil
}

// parseTokenEntry reads one bearer token entry, NAME=TOKEN or
// NAME=TOKEN:RIGHTS (RIGHTS: a2a.ParseRights, such as
// tasks:read,card:extended). The token ends at the first colon: a bearer
// token has none (RFC 6750 §2.1, b64token), nor white space. Without
// RIGHTS the token has every right (nil rights). No error quotes the
// token.
func parseTokenEntry(v string) (name, tok string, rights a2a.Rights, err error) {
	name, tok, ok := strings.Cut(v, "=")
	tok, spec, hasRights := strings.Cut(tok, ":")
	if !ok || name == "" || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", "", nil, errors.New("want NAME=TOKEN or NAME=TOKEN:RIGHTS (the token without spaces or colons)")
	}
	if hasRights {
		if rights, err = a2a.ParseRights(spec); err != nil {
			return "", "", nil, fmt.Errorf("principal %q: %v", name, err)
		}
	}
	return name, tok, rights, nil
}

// proxyToken settles the token sent to the --proxy agent: --proxy-token,
// else the one in --proxy-token-file, else $PARLEY_PROXY_TOKEN.
func (f *secretFlags) proxyToken(p *proxyFlags) error {
	tok, err := valueOrFile("proxy-token", p.token, f.proxyTokenFile, func(w string) { f.warnings = append(f.warnings, w) })
	if err != nil {
		return err
	}
	if tok == "" && f.proxyTokenFile == "" {
		tok = strings.TrimSpace(f.getenv(proxyTokenEnv))
	}
	p.token = tok
	return nil
}

// staticTokens reports whether bearer tokens are configured: some were
// given, or a token file was (which may be empty now and filled later).
func (cfg *serveConfig) staticTokens() bool {
	return len(cfg.principals) > 0 || len(cfg.secrets.tokenFiles) > 0
}

// applyTokens puts the bearer tokens into the handler's options as a
// TokenSet that SIGHUP can swap. It goes where a2ahttp would put
// Options.Tokens: first, or right after a JWT authenticator (which must
// see JWT-shaped bearer tokens before the static set refuses them).
func (cfg *serveConfig) applyTokens(o *a2ahttp.Options) {
	if !cfg.staticTokens() {
		return
	}
	cfg.secrets.set = a2ahttp.NewTokenSet(nil)
	cfg.secrets.set.ReplaceWithRights(cfg.principals, cfg.secrets.rights)
	at := 0
	if cfg.id.jwt != nil {
		at = 1
	}
	o.Authenticators = slices.Insert(o.Authenticators, at, a2ahttp.Authenticator(cfg.secrets.set))
}

// reloadOnSIGHUP re-reads the token files each time the process gets
// SIGHUP and swaps in the new set (with --auth-token and the environment,
// which do not change); a file that cannot be read or parsed leaves the
// previous set in force. It stops when the returned function is called.
func (f *secretFlags) reloadOnSIGHUP(log *slog.Logger) (stop func()) {
	if len(f.tokenFiles) == 0 || f.set == nil {
		return func() {}
	}
	return onSIGHUP(func() {
		m, rights, warnings, err := f.collect()
		if err != nil {
			log.Error("bearer tokens not reloaded; the previous ones stay in use", "err", err)
			return
		}
		for _, w := range warnings {
			log.Warn(w)
		}
		f.set.ReplaceWithRights(m, rights)
		log.Info("bearer tokens reloaded", "files", strings.Join(f.tokenFiles, ","), "tokens", len(m))
	})
}

// announceSecrets logs where secrets came from and what could leak: tokens
// on the command line, secret files others may read, a database password
// in the --store URL.
func (cfg *serveConfig) announceSecrets(log *slog.Logger) {
	f := cfg.secrets
	for _, w := range f.warnings {
		log.Warn(w)
	}
	if len(f.argv) > 0 {
		log.Warn("--auth-token puts tokens on the command line, where every local user can read them (ps); prefer --auth-token-file or " + authTokensEnv)
	}
	if f.getenv(authTokensEnv) != "" {
		log.Info("bearer tokens read from the environment", "variable", authTokensEnv)
	}
	if len(f.tokenFiles) > 0 {
		log.Info("bearer tokens read from files; SIGHUP re-reads them", "files", strings.Join(f.tokenFiles, ","), "tokens", len(cfg.principals))
	}
	if isPostgres(cfg.storeSpec) {
		if u, err := url.Parse(cfg.storeSpec); err == nil {
			if _, ok := u.User.Password(); ok {
				log.Warn("the --store URL holds the database password, on the command line where every local user can read it; use PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass) instead")
			}
		}
	}
}
