package cli

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// The values of --capabilities: each one changes what the served agent
// declares on its card, and so what the core lets callers do. They give
// conformance kits the agent shapes their optional tests need.
const (
	// shapeNoStreaming: capabilities.streaming false; the core refuses
	// SendStreamingMessage and SubscribeToTask with UnsupportedOperation
	// (spec §3.1.2, §3.1.6, §3.3.4).
	shapeNoStreaming = "no-streaming"
	// shapeNoPush: --push=false: capabilities.pushNotifications false;
	// the push config operations answer PushNotificationNotSupported.
	shapeNoPush = "no-push"
	// shapeExtendedCard: an authenticated extended card made from the
	// public one (one skill more), without an --extended-card file.
	shapeExtendedCard = "extended-card"
)

// shapeNames are the values --capabilities accepts, in the order its
// errors list them.
var shapeNames = []string{shapeNoStreaming, shapeNoPush, shapeExtendedCard}

// shapeFlags are the flags that choose the agent's shape: --capabilities
// and --require-extension.
type shapeFlags struct {
	switches map[string]bool // the --capabilities values given
	list     []string        // the same, in the order given
	required multiFlag       // --require-extension URIs

	// extended is the card of --capabilities extended-card, made (and
	// signed) by editCard from the public card.
	extended *a2a.AgentCard
}

// addShapeFlags registers the shape flags on fs.
func addShapeFlags(fs *flag.FlagSet) *shapeFlags {
	s := &shapeFlags{switches: map[string]bool{}}
	fs.Var((*capabilitiesFlag)(s), "capabilities", "change the agent's shape, for conformance kits: a comma-separated `LIST` of "+
		"no-streaming (the card declares no streaming; SendStreamingMessage and SubscribeToTask are refused with UnsupportedOperationError), "+
		"no-push (as --push=false), "+
		"extended-card (serve an authenticated extended card, the public card plus one skill, without an --extended-card file; needs authentication)")
	fs.Var(&s.required, "require-extension", "declare the extension `URI` on the card as required, and refuse with ExtensionSupportRequiredError "+
		"every call whose A2A-Extensions header does not activate it (repeatable)")
	return s
}

// capabilitiesFlag is --capabilities as a flag.Value: it may be given more
// than once; the switches add up.
type capabilitiesFlag shapeFlags

func (c *capabilitiesFlag) String() string { return strings.Join(c.list, ",") }

func (c *capabilitiesFlag) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(shapeNames, name) {
			return fmt.Errorf("unknown capability %q: want a comma-separated list of %s", name, strings.Join(shapeNames, ", "))
		}
		if !c.switches[name] {
			c.switches[name] = true
			c.list = append(c.list, name)
		}
	}
	return nil
}

func (s *shapeFlags) noStreaming() bool  { return s.switches[shapeNoStreaming] }
func (s *shapeFlags) noPush() bool       { return s.switches[shapeNoPush] }
func (s *shapeFlags) extendedCard() bool { return s.switches[shapeExtendedCard] }

// check refuses the shape flags that contradict other flags, and applies
// no-push to the push flags. fs is parsed; cfg holds the other flags.
// Every error is a usageError.
func (s *shapeFlags) check(fs *flag.FlagSet, cfg *serveConfig) error {
	if s.noPush() {
		if setExplicitly(fs, "push") && *cfg.push.on {
			return usageError{errors.New("--capabilities no-push and --push=true contradict each other: give one of them")}
		}
		*cfg.push.on = false
	}
	if s.extendedCard() {
		if cfg.extendedCard != "" {
			return usageError{fmt.Errorf("--capabilities extended-card makes an extended card and --extended-card %s gives one: give one of them", cfg.extendedCard)}
		}
		if !cfg.authConfigured() {
			return usageError{errors.New("--capabilities extended-card: the extended card is served only to authenticated callers, and no authentication is configured: " +
				"add --auth-token NAME=TOKEN (repeatable), then fetch it with that token")}
		}
	}
	seen := map[string]bool{}
	for _, uri := range s.required {
		if err := checkExtensionURI(uri); err != nil {
			return usageError{fmt.Errorf("--require-extension %q: %w", uri, err)}
		}
		if seen[uri] {
			return usageError{fmt.Errorf("--require-extension %q is given twice", uri)}
		}
		seen[uri] = true
	}
	return nil
}

// checkExtensionURI checks an extension URI as --require-extension takes
// it: absolute, and one that a caller can list in A2A-Extensions, a
// comma-separated header.
func checkExtensionURI(uri string) error {
	if strings.ContainsAny(uri, ", \t\r\n") {
		return errors.New("a comma or white space cannot be sent in the A2A-Extensions header")
	}
	if u, err := url.Parse(uri); err != nil || u.Scheme == "" {
		return errors.New("want an absolute URI, such as https://example.com/extensions/demo/v1")
	}
	return nil
}

// setExplicitly reports whether the flag name was given on the command
// line.
func setExplicitly(fs *flag.FlagSet, name string) bool {
	var set bool
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// requiredExtensionDescription is the description of a --require-extension
// extension on the card.
const requiredExtensionDescription = "required by this server: activate it with the A2A-Extensions header, or the call is refused with ExtensionSupportRequiredError"

// shape applies the shape flags to the capabilities of card: streaming
// off, the required extensions declared (an extension the card lists
// already becomes required), and the extended card of --capabilities
// extended-card declared. Push notifications are not touched: no-push
// turned --push off, and a2ahttp declares them from that.
func (s *shapeFlags) shape(card *a2a.AgentCard) {
	if card.Capabilities == nil {
		card.Capabilities = &a2a.AgentCapabilities{}
	}
	caps := card.Capabilities
	if s.noStreaming() {
		no := false
		caps.Streaming = &no
	}
	s.requireExtensions(caps)
	if s.extendedCard() {
		yes := true
		caps.ExtendedAgentCard = &yes
	}
}

// requireExtensions lists every --require-extension URI in caps as a
// required extension.
func (s *shapeFlags) requireExtensions(caps *a2a.AgentCapabilities) {
	for _, uri := range s.required {
		i := slices.IndexFunc(caps.Extensions, func(e *a2a.AgentExtension) bool { return e.GetUri() == uri })
		if i >= 0 {
			caps.Extensions[i].Required = true
			continue
		}
		caps.Extensions = append(caps.Extensions, &a2a.AgentExtension{Uri: uri, Required: true, Description: requiredExtensionDescription})
	}
}

// restrictExtended makes the card of --extended-card promise nothing the
// server refuses: streaming and push notifications off when they are, and
// the required extensions listed. What it declares beyond that stays as
// the file says.
func (s *shapeFlags) restrictExtended(card *a2a.AgentCard, pushOn bool) {
	if card.Capabilities == nil {
		card.Capabilities = &a2a.AgentCapabilities{}
	}
	caps := card.Capabilities
	no := false
	if s.noStreaming() && caps.Streaming != nil {
		caps.Streaming = &no
	}
	if !pushOn && caps.PushNotifications != nil {
		caps.PushNotifications = &no
	}
	s.requireExtensions(caps)
}

// extendedSkill is the skill that the extended card of --capabilities
// extended-card adds to the public card's, so that a client can tell the
// two apart.
var extendedSkill = &a2a.AgentSkill{
	Id:          "extended",
	Name:        "Extended card",
	Description: "Listed on the authenticated extended card only (parley serve --capabilities extended-card); the agent behaves as its other skills say.",
	Tags:        []string{"extended", "test"},
}

// makeExtended builds the extended card of --capabilities extended-card
// from the public card, whole but for its v0.3 interfaces and signature
// (card): the same card, one skill more, with the 0.3 interfaces when
// v0.3 is served, signed when the public card is.
func (cfg *serveConfig) makeExtended(card *a2a.AgentCard) error {
	if !cfg.shapes.extendedCard() {
		return nil
	}
	ext := proto.Clone(card).(*a2a.AgentCard)
	ext.Description += " (authenticated extended card)"
	ext.Skills = append(ext.Skills, proto.Clone(extendedSkill).(*a2a.AgentSkill))
	ext = cfg.versions.extended(ext)
	if err := cfg.id.signExtended(ext); err != nil {
		return err
	}
	cfg.shapes.extended = ext
	return nil
}
