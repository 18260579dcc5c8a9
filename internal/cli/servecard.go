package cli

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"parley.dev/parley/a2a"
)

// checkPublicURL checks --public-url: an absolute URL with a host. The
// card's interfaces at it are a2ahttp's to derive (a2ahttp.Start).
func checkPublicURL(publicURL string) error {
	if publicURL == "" {
		return nil
	}
	base := strings.TrimSuffix(publicURL, "/")
	if u, err := url.Parse(base); err != nil || u.Host == "" {
		return fmt.Errorf("--public-url %q: want an absolute URL", base)
	}
	return nil
}

// readExtendedCard reads the card of --extended-card (nil without it),
// with the 0.3 interfaces added when v0.3 is served, and its capabilities
// kept to what the server does (shapeFlags.restrictExtended): it is
// signed, and served, as it is then.
func (cfg *serveConfig) readExtendedCard() (*a2a.AgentCard, error) {
	if cfg.extendedCard == "" {
		return nil, nil
	}
	extended, err := loadExtendedCard(cfg.extendedCard)
	if err != nil {
		return nil, err
	}
	cfg.shapes.restrictExtended(extended, *cfg.push.on)
	return cfg.versions.extended(extended), nil
}

// loadExtendedCard reads and checks the JSON agent card in file.
func loadExtendedCard(file string) (*a2a.AgentCard, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(b, card); err != nil {
		return nil, fmt.Errorf("--extended-card %s: %w", file, err)
	}
	if v := a2a.CheckRequired(card); len(v) > 0 {
		return nil, fmt.Errorf("--extended-card %s: %s: %s", file, v[0].Field, v[0].Description)
	}
	return card, nil
}
