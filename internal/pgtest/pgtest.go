// Package pgtest gives tests a PostgreSQL database of their own. The
// server is named by the environment variable PARLEY_TEST_POSTGRES, a
// postgres:// URL of a role that may create databases, such as
//
//	PARLEY_TEST_POSTGRES='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
//
// Without it the tests that need PostgreSQL are skipped, with a message
// saying so, except when CI=true, where they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/internal/testenv"
)

// EnvURL names the environment variable holding the server's URL.
const EnvURL = "PARLEY_TEST_POSTGRES"

// ServerURL returns the URL in PARLEY_TEST_POSTGRES, or skips the test
// (fails it when CI=true) when it is unset.
func ServerURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		testenv.SkipOrFailInCI(tb, EnvURL+" is not set: set it to the postgres:// URL of a PostgreSQL server "+
			"where the tests may create databases, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	}
	return u
}

// NewDatabase creates a database of its own for the test (named
// parley_test_ and random hex), drops it when the test ends, and returns
// its URL.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	server := ServerURL(tb)
	b := make([]byte, 6)
	rand.Read(b)
	name := "parley_test_" + hex.EncodeToString(b)
	admin(tb, server, "CREATE DATABASE "+name)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(server)
	if err != nil {
		tb.Fatalf("pgtest: %s is not a URL: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

var schemas atomic.Int64

// NewSchema creates a new schema in the database at dbURL and returns a
// URL whose connections use it (search_path). Cheaper than a database,
// for tests that need many empty stores.
func NewSchema(tb testing.TB, dbURL string) string {
	tb.Helper()
	name := fmt.Sprintf("s%d", schemas.Add(1))
	admin(tb, dbURL, "CREATE SCHEMA "+name)
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// admin runs one statement on the database at u, failing the test on error.
func admin(tb testing.TB, u, stmt string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec(ctx, u, stmt); err != nil {
		tb.Fatalf("pgtest: %s: %v", stmt, err)
	}
}

// exec runs one statement on a connection of its own.
func exec(ctx context.Context, u, stmt string) error {
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}
