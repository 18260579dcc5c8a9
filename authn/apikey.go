package authn

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"parley.dev/parley/a2a"
)

// APIKeyHeader is the request header that carries an API key.
const APIKeyHeader = "X-API-Key"

// apiKeyPrefix starts every key NewAPIKey makes, so that a key found in a
// log or a repository is recognisable.
const apiKeyPrefix = "pk_"

// maxAPIKeyBytes bounds a presented key.
const maxAPIKeyBytes = 256

// ErrAPIKeyRefused is the answer to an unknown (or revoked) API key.
var ErrAPIKeyRefused = errors.New("the API key was refused")

// APIKeys authenticates the X-API-Key header against a file of names and
// key hashes. The file holds no key: one line per key, "NAME sha256:HEX"
// (the SHA-256 of the key; keys are 256 random bits, so a fast hash is
// enough), with blank lines and "#" comments allowed. A third field gives
// the key rights, "NAME sha256:HEX tasks:read,card:extended"
// (a2a.ParseRights); a key without one has every right. Revoke a key by
// removing its line and calling Reload (`parley serve` reloads on SIGHUP).
type APIKeys struct {
	file string
	keys atomic.Pointer[[]apiKey]
}

type apiKey struct {
	name   string
	hash   [sha256.Size]byte
	rights a2a.Rights // nil: every right
}

// LoadAPIKeys reads the key file.
func LoadAPIKeys(file string) (*APIKeys, error) {
	a := &APIKeys{file: file}
	if err := a.Reload(); err != nil {
		return nil, err
	}
	return a, nil
}

// Reload reads the key file again; on error the keys in use stay.
func (a *APIKeys) Reload() error {
	b, err := os.ReadFile(a.file)
	if err != nil {
		return fmt.Errorf("API keys: %w", err)
	}
	keys, err := parseAPIKeys(b)
	if err != nil {
		return fmt.Errorf("API keys %s: %w", a.file, err)
	}
	a.keys.Store(&keys)
	return nil
}

// Len returns the number of keys loaded.
func (a *APIKeys) Len() int { return len(*a.keys.Load()) }

// parseAPIKeys reads the lines of a key file.
func parseAPIKeys(b []byte) ([]apiKey, error) {
	var keys []apiKey
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 || !strings.HasPrefix(f[1], "sha256:") {
			return nil, fmt.Errorf("line %d: want NAME sha256:HEX [RIGHT,...]", n)
		}
		h, err := hex.DecodeString(strings.TrimPrefix(f[1], "sha256:"))
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("line %d: the hash is not 64 hex digits", n)
		}
		k := apiKey{name: f[0]}
		copy(k.hash[:], h)
		if len(f) == 3 {
			if k.rights, err = a2a.ParseRights(f[2]); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
		}
		keys = append(keys, k)
	}
	return keys, sc.Err()
}

// Authenticate implements a2ahttp.Authenticator. Every stored hash is
// compared, in constant time, so the time taken does not tell which key
// came close.
func (a *APIKeys) Authenticate(r *http.Request) (string, error) {
	p, _, err := a.AuthenticateRights(r)
	return p, err
}

// AuthenticateRights implements a2ahttp.RightsAuthenticator: Authenticate,
// with the key's rights (nil when its line gives none).
func (a *APIKeys) AuthenticateRights(r *http.Request) (string, a2a.Rights, error) {
	vals := r.Header.Values(APIKeyHeader)
	switch {
	case len(vals) == 0:
		return "", nil, nil
	case len(vals) > 1:
		return "", nil, errors.New("more than one " + APIKeyHeader + " header")
	case len(vals[0]) > maxAPIKeyBytes:
		return "", nil, ErrAPIKeyRefused
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(vals[0])))
	var found *apiKey
	keys := *a.keys.Load()
	for i := range keys {
		if subtle.ConstantTimeCompare(sum[:], keys[i].hash[:]) == 1 {
			found = &keys[i]
		}
	}
	if found == nil {
		return "", nil, ErrAPIKeyRefused
	}
	return found.name, slices.Clone(found.rights), nil
}

// NewAPIKey makes a key for name and returns it with the line to add to
// the key file. The key has every right (NewAPIKeyWithRights with nil).
func NewAPIKey(name string) (key, line string, err error) {
	return NewAPIKeyWithRights(name, nil)
}

// NewAPIKeyWithRights is NewAPIKey for a key that has only the given
// rights (spec §3.3.2): the line carries them as its third field, read
// back by APIKeys. Nil rights give a line without that field (every
// right); an empty, non-nil Rights, which would allow nothing, or a right
// ParseRights does not know, is an error.
func NewAPIKeyWithRights(name string, rights a2a.Rights) (key, line string, err error) {
	if name == "" || strings.ContainsAny(name, " \t\r\n#") {
		return "", "", fmt.Errorf("API key name %q: want a name without spaces or #", name)
	}
	if rights != nil {
		if _, err := a2a.ParseRights(rights.String()); err != nil {
			return "", "", err
		}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	key = apiKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(key))
	line = name + " sha256:" + hex.EncodeToString(sum[:])
	if rights != nil {
		line += " " + rights.String()
	}
	return key, line, nil
}
