package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
)

// newSecretFlags parses args with the secret flags alone, the
// environment being env.
func newSecretFlags(t *testing.T, env map[string]string, args ...string) *secretFlags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := addSecretFlags(fs)
	f.getenv = func(k string) string { return env[k] }
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSecretSources: --auth-token, $PARLEY_AUTH_TOKENS and token files
// merge; errors name the file and line but never a token; a token given
// to two principals is refused; --proxy-token comes from its flag, its
// file or the environment.
func TestSecretSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "# comment\n\nalice=SECRET-A\n  bob =  SECRET-B \n")
	f := newSecretFlags(t, map[string]string{authTokensEnv: "carol=SECRET-C\n dave=SECRET-D"}, "--auth-token-file", good)
	m, err := f.tokens([]string{"erin=SECRET-E"})
	want := map[string]string{"SECRET-A": "alice", "SECRET-B": "bob", "SECRET-C": "carol", "SECRET-D": "dave", "SECRET-E": "erin"}
	if err != nil || len(m) != len(want) {
		t.Fatalf("tokens = %v, %v; want %v", m, err, want)
	}
	for tok, name := range want {
		if m[tok] != name {
			t.Errorf("token of %s: got %q", name, m[tok])
		}
	}

	for _, tc := range []struct {
		name, text string
		env        string
		want       string
	}{
		{"no equals sign", "alice=SECRET-A\nSECRET-LEAK\n", "", ":2: want NAME=TOKEN"},
		{"empty token", "alice=\n", "", ":1: want NAME=TOKEN"},
		{"space in token", "alice=SECRET LEAK\n", "", ":1: want NAME=TOKEN"},
		{"shared token", "alice=SECRET-LEAK\nbob=SECRET-LEAK\n", "", `principals "alice" and "bob"`},
		{"shared with the environment", "alice=SECRET-LEAK\n", "bob=SECRET-LEAK", `principals "bob" and "alice"`},
		{"bad environment", "", "SECRET-LEAK", authTokensEnv + ": entry 1"},
		{"unknown right", "alice=SECRET-LEAK:tasks:admin\n", "", `:1: principal "alice": unknown right "tasks:admin"`},
		{"no rights after the colon", "alice=SECRET-LEAK:\n", "", `:1: principal "alice": no rights`},
	} {
		file := write("bad", tc.text)
		_, err := newSecretFlags(t, map[string]string{authTokensEnv: tc.env}, "--auth-token-file", file).tokens(nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "LEAK") {
			t.Errorf("%s: error %v; want one with %q and no token", tc.name, err, tc.want)
		}
	}
	if _, err := newSecretFlags(t, nil, "--auth-token-file", filepath.Join(dir, "missing")).tokens(nil); err == nil {
		t.Error("a missing token file is accepted")
	}

	tokFile := write("proxy", "# the upstream's token\nPROXY-SECRET\n")
	for _, tc := range []struct {
		name  string
		flag  string
		env   string
		args  []string
		want  string
		usage bool
	}{
		{name: "flag", flag: "from-flag", env: "from-env", want: "from-flag"},
		{name: "file", env: "from-env", args: []string{"--proxy-token-file", tokFile}, want: "PROXY-SECRET"},
		{name: "environment", env: " from-env\n", want: "from-env"},
		{name: "both", flag: "from-flag", args: []string{"--proxy-token-file", tokFile}, usage: true},
		{name: "two lines", args: []string{"--proxy-token-file", write("two", "a\nb\n")}, usage: true},
		{name: "empty file", args: []string{"--proxy-token-file", write("empty", "# nothing\n")}, usage: true},
	} {
		p := &proxyFlags{token: tc.flag}
		err := newSecretFlags(t, map[string]string{proxyTokenEnv: tc.env}, tc.args...).proxyToken(p)
		if _, isUsage := err.(usageError); tc.usage != isUsage || (!tc.usage && p.token != tc.want) {
			t.Errorf("%s: token %q, err %v; want %q (usage error %v)", tc.name, p.token, err, tc.want, tc.usage)
		}
	}
}

// TestTokenRights: NAME=TOKEN:RIGHTS gives a token rights, from every
// source; a token without them has every right (none recorded).
func TestTokenRights(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(file, []byte("dash = DASH-TOKEN:tasks:read,card:extended\nbob=BOB\n"), 0o600)
	f := newSecretFlags(t, map[string]string{authTokensEnv: "bot=BOT:tasks:write,push"}, "--auth-token-file", file)
	m, err := f.tokens([]string{"carol=C:tasks:read", "alice=A:*"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]a2a.Rights{
		"DASH-TOKEN": {a2a.RightTasksRead, a2a.RightExtendedCard}, "BOT": {a2a.RightTasksWrite, a2a.RightPush},
		"C": {a2a.RightTasksRead}, "A": {a2a.RightAll},
	}
	if m["DASH-TOKEN"] != "dash" || m["C"] != "carol" || m["BOB"] != "bob" || len(f.rights) != len(want) {
		t.Fatalf("tokens %v, rights %v", m, f.rights)
	}
	for tok, r := range want {
		if !slices.Equal(f.rights[tok], r) {
			t.Errorf("rights of %s = %v, want %v", m[tok], f.rights[tok], r)
		}
	}
	if _, ok := f.rights["BOB"]; ok {
		t.Error("a token without rights got some")
	}
}

// TestEmptyTokenFileTurnsAuthOn: a token file with no tokens yet still
// means bearer authentication is on (the file may be filled and SIGHUP
// sent later): callers without a token are not let in meanwhile.
func TestEmptyTokenFileTurnsAuthOn(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(file, []byte("# no one yet\n"), 0o600)
	cfg, err := parseServeFlags([]string{"--store", "memory", "--auth-token-file", file}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.authConfigured() || !cfg.staticTokens() {
		t.Error("an empty --auth-token-file leaves authentication off")
	}
}
