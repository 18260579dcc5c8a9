package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// An agent catalog reference, catalog:SOURCE#NAME, is accepted wherever
// --agent-card takes a reference (A2A CLI SPEC §10.1, Tier 3): SOURCE is
// a catalog document (an http(s) URL or a file path) and NAME the entry
// to use. A2A defines no catalog protocol, and the CLI specification
// leaves it out of scope, so Parley reads the simplest document that
// lists agents:
//
//	{"agents": [ENTRY, ...]}
//
// where an ENTRY is either a whole AgentCard (found by its name) or
// {"name": NAME, "url": REF}, REF being any other --agent-card reference
// (an agent's URL, its card's URL, a bare host or a card file). The entry
// is resolved to its card before anything else is done.

// catalogPrefix starts a catalog reference.
const catalogPrefix = "catalog:"

// catalogEntry is one agent of a catalog: a whole card, or a name and a
// reference.
type catalogEntry struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// resolveCatalog reads the card that the catalog reference ref names.
func (c *common) resolveCatalog(ctx context.Context, ref string, capture *cardCapture) (*a2a.AgentCard, error) {
	source, name, ok := strings.Cut(strings.TrimPrefix(ref, catalogPrefix), "#")
	if !ok || source == "" || name == "" {
		return nil, usageError{fmt.Errorf("%q: a catalog reference is catalog:SOURCE#NAME (SOURCE a URL or a file)", ref)}
	}
	doc, err := c.readCatalog(ctx, source)
	if err != nil {
		return nil, &client.CardError{URL: source, StatusCode: http.StatusNotFound, Err: fmt.Errorf("the catalog: %w", err)}
	}
	e, raw, err := findCatalogEntry(doc, name)
	if err != nil {
		return nil, &client.CardError{URL: source + "#" + name, StatusCode: http.StatusNotFound, Err: err}
	}
	if raw == nil {
		if strings.HasPrefix(e.URL, catalogPrefix) {
			return nil, &client.CardError{URL: source, Err: fmt.Errorf("entry %q names another catalog: one level only", name)}
		}
		return c.resolve(ctx, e.URL, capture)
	}
	if capture != nil {
		capture.mu.Lock()
		capture.buf.Reset()
		capture.buf.Write(raw)
		capture.mu.Unlock()
	}
	return client.ParseCard(source+"#"+name, raw, c.warn)
}

// findCatalogEntry finds the agent name (its case ignored) in the catalog
// document doc: an entry with a reference (raw nil), or a whole card
// (raw, to be parsed as a card).
func findCatalogEntry(doc []byte, name string) (e catalogEntry, raw json.RawMessage, err error) {
	var cat struct {
		Agents []json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(doc, &cat); err != nil {
		return e, nil, fmt.Errorf("not a catalog ({\"agents\": [...]}): %v", err)
	}
	var names []string
	for _, r := range cat.Agents {
		var x catalogEntry
		if json.Unmarshal(r, &x) != nil || x.Name == "" {
			continue
		}
		names = append(names, x.Name)
		if !strings.EqualFold(x.Name, name) {
			continue
		}
		var probe struct {
			Interfaces json.RawMessage `json:"supportedInterfaces"`
		}
		json.Unmarshal(r, &probe)
		if x.URL != "" && probe.Interfaces == nil {
			return x, nil, nil
		}
		return x, r, nil
	}
	return e, nil, fmt.Errorf("no agent %q in the catalog (it lists: %s)", name, strings.Join(names, ", "))
}

// readCatalog reads the catalog document at source: an http(s) URL
// (with the command's TLS settings, and no credential: the catalog has
// declared no security scheme, SPEC §12.4) or a file.
func (c *common) readCatalog(ctx context.Context, source string) ([]byte, error) {
	if !isHTTPURL(source) {
		return os.ReadFile(strings.TrimPrefix(source, "file://"))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.plainHTTPClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 4<<20))
}
