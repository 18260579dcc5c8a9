package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Secrets given as flag values are in the process's argv, which every
// local user can read (ps, /proc/PID/cmdline). Each flag that takes one
// therefore has a -file twin, and some an environment variable (a
// process's environment is readable by its owner only).

// clientTokenEnv holds the bearer token of the client commands when
// neither --token nor --token-file is given.
const clientTokenEnv = "PARLEY_TOKEN"

// looseWarning is a warning about a secret file that group or other
// users may read or write, or "" when only its owner may. Such a file is
// used anyway: refusing it would break setups where a group shares a
// secret on purpose (a service group, a mounted Kubernetes secret).
func looseWarning(flag, path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s: mode %04o lets other users read or change it (chmod 600 keeps it to its owner)", flag, path, fi.Mode().Perm())
}

// readSecretFile reads a secret of one line from path: surrounding
// whitespace is dropped; blank lines and lines starting with # are
// skipped; more than one remaining line is an error. The error never
// quotes the file's content.
func readSecretFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	secret := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if secret != "" {
			return "", fmt.Errorf("%s %s: more than one line: want the secret alone", flag, path)
		}
		secret = line
	}
	if secret == "" {
		return "", fmt.Errorf("%s %s: the file holds no secret", flag, path)
	}
	return secret, nil
}

// valueOrFile returns the secret of a flag pair: value (--NAME) or the
// content of file (--NAME-file); giving both is a usage error. warn, if
// not nil, is told about a file other users may read.
func valueOrFile(flag, value, file string, warn func(string)) (string, error) {
	if file == "" {
		return value, nil
	}
	if value != "" {
		return "", usageError{fmt.Errorf("--%s and --%s-file both given: give one", flag, flag)}
	}
	s, err := readSecretFile("--"+flag+"-file", file)
	if err != nil {
		return "", usageError{err}
	}
	if w := looseWarning("--"+flag+"-file", file); w != "" && warn != nil {
		warn(w)
	}
	return s, nil
}

// resolveToken settles the client's bearer token: --token, else the one
// in --token-file, else $PARLEY_TOKEN.
func (c *common) resolveToken(getenv func(string) string) error {
	tok, err := valueOrFile("token", c.token, c.tokenFile, c.warn)
	if err != nil {
		return err
	}
	if tok == "" && c.tokenFile == "" {
		tok = strings.TrimSpace(getenv(clientTokenEnv))
	}
	if strings.ContainsAny(tok, "\r\n") {
		return usageError{errors.New("the bearer token holds a line break")}
	}
	c.token = tok
	return nil
}
