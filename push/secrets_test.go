package push_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
	"parley.dev/parley/taskstore/sqlitestore"
)

// The secrets of a webhook in TestNoSecretsWritten. Each is found by its
// stem, which no log line holds by chance; the query value has a '+' so
// that its escaped (%2B) and decoded forms differ, and both are looked for.
var secretStems = []string{"qsecret", "psecret", "fsecret", "usecret", "wsecret", "csecret", "tsecret"}

const (
	query      = "api_key=qsecret%2B7Q" // a query value, escaped as in the URL
	pathPart   = "/hook/psecret7P"      // a capability path
	fragment   = "#fsecret7F"
	userinfo   = "usecret7U:wsecret7W@"
	credential = "csecret7C"
	token      = "tsecret7T"
)

// TestNoSecretsWritten: failing deliveries to webhooks whose URL carries
// a query string, a path, a fragment and user information, with
// credentials and a token, write none of them anywhere: not in a log line
// at any level, not in the reason of the suspension kept in the store, not
// in Stats. Four ways to fail: a refused connection (net/http quotes the
// URL in its error), a URL with user information (found in the store,
// as registration refuses it), a receiver that echoes the secrets in its
// status line, and a host name the guard refuses at connect time.
func TestNoSecretsWritten(t *testing.T) {
	t.Parallel()
	closed := closedAddr(t)
	echoAddr := echoSecrets(t)
	_, echoPort, _ := net.SplitHostPort(echoAddr)

	dbPath := filepath.Join(t.TempDir(), "tasks.db")
	store, err := sqlitestore.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	o := fast()
	o.MaxFailures = 3
	o.Guard = mustGuard(t, &push.GuardOptions{AllowHosts: []string{"127.0.0.1"},
		Resolver: push.ResolverFunc(func(context.Context, string) ([]net.IPAddr, error) {
			return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
		})})
	e := newEnv(t, store, o)
	tk := e.send(t, "input-required", nil)
	registerSecretWebhooks(t, e, tk, closed, echoAddr, echoPort)

	e.follow(t, tk.Id, "more") // three more notifications for each
	eventually(t, "four suspensions", func() bool { return e.sender.Stats().Suspended == 4 })

	checkLogsKeepSecrets(t, e.logs.String(), closed, echoPort)
	checkStatsKeepSecrets(t, e.sender.Stats())
	checkStoreKeepsSecrets(t, dbPath)
}

// closedAddr returns a loopback address that nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	return addr
}

// echoSecrets starts a receiver that answers 503 with the secrets of the
// request (query, api_key, path, Authorization, notification token) in
// its status line, and returns its address.
func echoSecrets(t *testing.T) string {
	t.Helper()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 503 " + r.URL.RawQuery + " " + r.URL.Query().Get("api_key") + " " + r.URL.Path + " " +
			r.Header.Get("Authorization") + " " + r.Header.Get("A2A-Notification-Token") + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		buf.Flush()
	}))
	t.Cleanup(echo.Close)
	return echo.Listener.Addr().String()
}

// registerSecretWebhooks gives tk four webhooks carrying every secret:
// through the server, one at the closed address and one at the echo; and,
// as registration refuses them (without the secrets in the answer),
// straight into the store, one with user information and one at a host
// name the guard refuses.
func registerSecretWebhooks(t *testing.T, e *env, tk *a2a.Task, closed, echoAddr, echoPort string) {
	t.Helper()
	auth := &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: credential}
	e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Id: "refused",
		Url: "http://" + closed + pathPart + "?" + query + fragment, Token: token, Authentication: auth})
	e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Id: "echo",
		Url: "http://" + echoAddr + pathPart + "?" + query, Token: token, Authentication: auth})
	for _, cfg := range []*a2a.TaskPushNotificationConfig{
		{TaskId: tk.Id, Id: "userinfo", Url: "http://" + userinfo + echoAddr + pathPart + "?" + query, Token: token, Authentication: auth},
		{TaskId: tk.Id, Id: "name", Url: "http://vm.example:" + echoPort + pathPart + "?" + query, Token: token, Authentication: auth},
	} {
		_, err := e.srv.CreateTaskPushNotificationConfig(call(t), cfg)
		if !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("Create with %s: %v, want InvalidParams", cfg.Url, err)
		} else if leaked(err.Error()) != "" || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("refusal of %s says too much: %v", cfg.Id, err)
		}
		e.storeConfig(t, tk, cfg)
	}
}

// checkLogsKeepSecrets checks that logs hold no secret, yet name every
// failure path, its reason and its webhook, and not what a refused name
// resolved to.
func checkLogsKeepSecrets(t *testing.T, logs, closed, echoPort string) {
	t.Helper()
	if s := leaked(logs); s != "" {
		t.Errorf("the logs hold a secret (%s):\n%s", s, logs)
	}
	for _, want := range []string{
		"delivery failed; will retry", "notification dropped", "configuration suspended", // every path was logged
		"connection refused", "503", redactedMark, "user information", "vm.example is not allowed", // with its reason
		"url=http://" + closed + "/…", "url=http://vm.example:" + echoPort + "/…", // and which webhook
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs do not hold %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "resolves to 127") {
		t.Errorf("the logs say what a refused name resolved to:\n%s", logs)
	}
}

// checkStatsKeepSecrets checks that Stats lists the four suspensions
// with no secret in their reasons.
func checkStatsKeepSecrets(t *testing.T, st push.Stats) {
	t.Helper()
	if len(st.Recent) != 4 {
		t.Errorf("Stats.Recent has %d suspensions, want 4", len(st.Recent))
	}
	for _, s := range st.Recent {
		if l := leaked(s.Reason); l != "" {
			t.Errorf("Stats.Recent reason of %s holds a secret (%s): %s", s.Target.ConfigID, l, s.Reason)
		}
	}
}

// checkStoreKeepsSecrets reads the database at dbPath directly and checks
// that it holds four suspension reasons, none empty and none with a secret.
func checkStoreKeepsSecrets(t *testing.T, dbPath string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, suspended FROM push_configs WHERE suspended IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, reason string
		if err := rows.Scan(&id, &reason); err != nil {
			t.Fatal(err)
		}
		n++
		if l := leaked(reason); l != "" || reason == "" {
			t.Errorf("stored suspension reason of %s holds a secret (%q) or is empty: %s", id, l, reason)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("the store holds %d suspension reasons, want 4", n)
	}
}

// redactedMark is what a scrubbed secret becomes.
const redactedMark = "[redacted]"

// leaked returns the first secret found in s, or "".
func leaked(s string) string {
	for _, stem := range append(secretStems, "api_key=") {
		if strings.Contains(s, stem) {
			return stem
		}
	}
	return ""
}
