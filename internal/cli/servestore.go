package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/seal"
	"parley.dev/parley/taskstore/sqlitestore"
)

// pushKeyEnv names the environment variable that may hold the push keys,
// read when --push-key-file is not given.
const pushKeyEnv = "PARLEY_PUSH_KEY"

// storeFlags are the flags of `parley serve` about the store: its bound
// on tasks (--max-tasks, below), and its secrets: the push keys that
// encrypt the webhook URLs, tokens and credentials of push configurations
// at rest (spec §13.2), and --new-push-key, which makes one.
//
// The keys are text, read from --push-key-file or else from
// PARLEY_PUSH_KEY: 32-byte keys, each as base64 (44 characters) or hex (64
// characters), separated by newlines, commas or spaces, with '#' starting
// a comment (see seal.Parse). The first key encrypts; all of them decrypt.
// To rotate, put a new key first and keep the old ones after it: at start
// the server encrypts every configuration again under the first key, after
// which the old keys can go. Without a key the secrets are stored as the
// client gave them, and the server says so at start.
//
// --store-timeout bounds every call of the PostgreSQL store
// (pgstore.Options.Timeout).
//
// --max-tasks bounds the memory store (memstore.Options.MaxTasks): past
// it, a new task evicts the finished tasks that ended first, so that the
// server's memory stays flat; active tasks are never evicted. --max-messages
// bounds its idempotency records (memstore.Options.MaxMessages), which
// outlive their tasks and hold the direct replies. The durable stores are
// bounded by age instead, with --retention and --idempotency-window.
type storeFlags struct {
	pushKeyFile *string
	newPushKey  *bool
	maxTasks    *int
	timeout     *time.Duration
	maxMessages *int
	getenv      func(string) string // os.Getenv; tests replace it
	checked     *checkedStore       // set by check
}

// checkedStore is a --store value checked, with the push keys read.
type checkedStore struct {
	spec string
	keys *seal.Keys
	from string // where the keys came from
}

// addStoreFlags defines the store secret flags on fs.
func addStoreFlags(fs *flag.FlagSet) *storeFlags {
	return &storeFlags{
		pushKeyFile: fs.String("push-key-file", "", "encrypt push webhook URLs, tokens and credentials at rest in the sqlite or postgres store with the keys in `FILE` (base64 or hex, one per line, the first encrypts; default: the "+pushKeyEnv+" environment variable)"),
		newPushKey:  fs.Bool("new-push-key", false, "print a new random push key (base64) and exit"),
		maxTasks: fs.Int("max-tasks", memstore.DefaultMaxTasks, "with --store memory, keep at most `N` tasks, evicting the finished tasks that ended first "+
			"(never an active one; negative: no bound); the sqlite and postgres stores ignore it and use --retention"),
		timeout: fs.Duration("store-timeout", pgstore.DefaultTimeout, "with --store postgres://: how long one call of the store may take (a statement, a transaction, a new connection) and a silent connection may live; "+
			"past it the call answers UnavailableError (HTTP 503 with Retry-After, gRPC UNAVAILABLE) and readiness turns off (docs/operations.md)"),
		maxMessages: fs.Int("max-messages", memstore.DefaultMaxMessages, "with --store memory, keep the idempotency records of at most `N` messages, "+
			"the oldest going first (a resend of one gone runs again; negative: no bound); the sqlite and postgres stores ignore it and use --idempotency-window"),
		getenv: os.Getenv,
	}
}

// printNewPushKey writes a new key from crypto/rand to w, in the form
// --push-key-file reads.
func printNewPushKey(w io.Writer) error {
	_, err := fmt.Fprintln(w, seal.Encode(seal.NewKey()))
	return err
}

// pushKeys reads the push keys: from --push-key-file when it is given,
// otherwise from PARLEY_PUSH_KEY; nil when neither is set. The flag wins
// over the environment, with a warning when both are set. No error repeats
// a key.
func (f *storeFlags) pushKeys(log *slog.Logger) (keys *seal.Keys, from string, err error) {
	env := f.getenv(pushKeyEnv)
	if *f.pushKeyFile == "" {
		if env == "" {
			return nil, "", nil
		}
		if keys, err = seal.Parse(env); err != nil {
			return nil, "", usageError{fmt.Errorf("%s: %v", pushKeyEnv, err)}
		}
		return keys, pushKeyEnv, nil
	}
	file := *f.pushKeyFile
	if env != "" {
		log.Warn("push: --push-key-file is given, so "+pushKeyEnv+" is ignored", "file", file)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, "", fmt.Errorf("--push-key-file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("push: the key file can be read by others than its owner; chmod 600 it", "file", file, "mode", fmt.Sprintf("%#o", fi.Mode().Perm()))
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("--push-key-file: %w", err)
	}
	if keys, err = seal.Parse(string(text)); err != nil {
		return nil, "", usageError{fmt.Errorf("--push-key-file %s: %v", file, err)}
	}
	return keys, file, nil
}

// open opens the task store named by a --store value with the push keys,
// if any. With keys, it encrypts under the first key every configuration
// stored in plain text or under another key before the server starts.
// Without keys and with push delivery on, it warns that credentials are
// stored in plain text. A database holding credentials the keys cannot
// decrypt is refused, with a message saying how to give the keys.
func (f *storeFlags) open(ctx context.Context, spec string, pushOn bool, log *slog.Logger) (taskstore.Store, error) {
	if err := f.check(spec, log); err != nil {
		return nil, err
	}
	keys, from := f.checked.keys, f.checked.from
	if spec == "memory" {
		if keys != nil {
			log.Warn("push: the push keys are not used: the memory store keeps nothing at rest", "from", from)
		}
		return memstore.NewWith(&memstore.Options{MaxTasks: *f.maxTasks, MaxMessages: *f.maxMessages}), nil
	}
	if *f.maxTasks != memstore.DefaultMaxTasks {
		log.Warn("--max-tasks applies to the memory store only: this store keeps finished tasks until --retention removes them", "store", storeLabel(spec))
	}
	if *f.maxMessages != memstore.DefaultMaxMessages {
		log.Warn("--max-messages applies to the memory store only: this store keeps message records until --idempotency-window removes them", "store", storeLabel(spec))
	}
	if isPostgres(spec) {
		return openPostgres(ctx, spec, &pgstore.Options{PushKeys: keys, Timeout: *f.timeout}, from, pushOn, log)
	}
	return openSQLite(ctx, strings.TrimPrefix(spec, "sqlite:"), keys, from, pushOn, log)
}

// check checks a --store value (its kind; a SQLite file's directory; a
// PostgreSQL URL's syntax) and reads the push keys, opening nothing:
// `parley serve` calls it before it listens, so that a mistake in either
// is reported as itself, never hidden behind the address being in use.
// open calls it too; a second call for the same value does nothing.
func (f *storeFlags) check(spec string, log *slog.Logger) error {
	if f.checked != nil && f.checked.spec == spec {
		return nil
	}
	switch {
	case spec == "memory":
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return usageError{errors.New("--store sqlite:PATH needs a path")}
		}
		if err := checkDir(path); err != nil {
			return err
		}
	case isPostgres(spec):
		if _, err := pgx.ParseConfig(spec); err != nil {
			// pgx's parse errors leave the password out.
			return usageError{fmt.Errorf("--store: not a PostgreSQL URL: %v", err)}
		}
	default:
		return usageError{fmt.Errorf("--store %q: want memory, sqlite:PATH or postgres://URL", storeLabel(spec))}
	}
	keys, from, err := f.pushKeys(log)
	if err != nil {
		return err
	}
	f.checked = &checkedStore{spec: spec, keys: keys, from: from}
	return nil
}

// openSQLite opens the SQLite store at path with the push keys (nil for
// none) and brings every stored configuration under the first key.
func openSQLite(ctx context.Context, path string, keys *seal.Keys, from string, pushOn bool, log *slog.Logger) (taskstore.Store, error) {
	s, err := sqlitestore.OpenWith(path, &sqlitestore.Options{PushKeys: keys})
	if errors.Is(err, sqlitestore.ErrNoPushKey) || errors.Is(err, seal.ErrUnknownKey) {
		return nil, fmt.Errorf("%w\n(give the key the credentials were encrypted with, after any new key, with --push-key-file FILE or %s)", err, pushKeyEnv)
	}
	if err != nil {
		return nil, err
	}
	return sealStored(ctx, s, keys, from, pushOn, log, "file", path)
}

// resealer is a store whose push secrets can be brought under the first
// key (sqlitestore and pgstore).
type resealer interface {
	taskstore.Store
	ResealPushConfigs(ctx context.Context) (int, error)
}

// sealStored warns, without keys and with push on, that push secrets are
// kept in plain text; with keys it brings every stored configuration
// under the first one. where names the store in the log.
func sealStored(ctx context.Context, s resealer, keys *seal.Keys, from string, pushOn bool, log *slog.Logger, where ...any) (taskstore.Store, error) {
	if keys == nil {
		if pushOn {
			log.Warn("push: webhook URLs, tokens and credentials are stored in plain text in the database; give a key with --push-key-file or "+
				pushKeyEnv+" to encrypt them (parley serve --new-push-key makes one)", where...)
		}
		return s, nil
	}
	ids := keys.IDs()
	log.Info("push: webhook URLs, tokens and credentials are encrypted at rest", "key", ids[0], "older_keys", len(ids)-1, "from", from)
	n, err := s.ResealPushConfigs(ctx)
	if n > 0 {
		log.Info("push: encrypted stored configurations under the first key", "configs", n, "key", ids[0])
	}
	if err != nil {
		// What did not decrypt stays as it is and fails when used; the
		// rest of the store is sound.
		log.Error("push: some stored configurations could not be decrypted", "err", err)
	}
	return s, nil
}

// checkDir reports a database path whose directory is missing or is not a
// directory, naming the directory: SQLite would only say that it is
// "unable to open database file". URIs (file:…) and :memory: are left to
// SQLite.
func checkDir(path string) error {
	if strings.HasPrefix(path, "file:") || strings.HasPrefix(path, ":memory:") {
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usageError{fmt.Errorf("--store sqlite:%s: the directory %s does not exist (create it, or choose another path)", path, dir)}
	case err != nil:
		return fmt.Errorf("--store sqlite:%s: %w", path, err)
	case !fi.IsDir():
		return usageError{fmt.Errorf("--store sqlite:%s: %s is not a directory", path, dir)}
	}
	return nil
}
