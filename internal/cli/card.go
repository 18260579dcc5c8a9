package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"parley.dev/parley/a2a"
)

// cardCmd runs `parley card URL`: fetch, validate and print an agent card.
func cardCmd(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "get" { // `card get`, A2A CLI SPEC §10.1
		e.name, args = "card get", args[1:]
	}
	fs, c := e.newFlags(`card get -a AGENT [flags]
       card URL [flags]   (the older spelling)

Reads the agent card of AGENT (--agent-card: a base URL, whose
/.well-known/agent-card.json is fetched; a bare host, the same at its
https origin (http for localhost); the URL of a .json card; or a card
file, file://PATH or a path), checks that it is an A2A v1.0 card with
every REQUIRED member, and prints it. -o json prints the card as served
(its JSON compacted to one line). With --verify-key or --verify-jwks the card's
signature (spec §8.4) must verify, over the card document as received, with
a key given there (a jku named by the card is not followed), else the
command exits 1 saying why.`, true)
	vf := addVerifyFlags(fs)
	extended := fs.Bool("extended", false, "read the agent's authenticated extended card (GetExtendedAgentCard) with the credential given, "+
		"which one of the public card's security schemes must take")
	fs.Bool("validate", false, "check the card against A2A v1.0's AgentCard (always done: a card that fails exits 1, A2ACLI_ERR_CARD_INVALID, naming what is wrong)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, 1, "the agent URL"); err != nil {
		return err
	}
	ctx, cancel := c.context(ctx, defaultTimeout)
	defer cancel()
	capture := &cardCapture{}
	card, err := c.resolve(ctx, pos[0], capture)
	if err != nil {
		return err
	}
	raw := capture.bytes()
	kid, err := vf.verify(ctx, raw)
	if err != nil {
		return err
	}
	if *extended {
		return e.extendedCard(ctx, card, pos[0])
	}
	if c.json {
		if kid == "" && len(card.GetSignatures()) > 0 { // the card is the output: the outcome goes to stderr
			c.warn("signature " + signatureOutcome(card, kid))
		}
		raw = bytes.TrimSpace(raw)
		var compact bytes.Buffer
		if json.Compact(&compact, raw) == nil {
			raw = compact.Bytes()
		}
		e.out.printf("%s\n", raw)
		return nil
	}
	e.out.printCard(card)
	e.out.printSignature(card, kid)
	return nil
}

// extendedCard prints the agent's authenticated extended card (spec
// §3.1.11), read only when the public card says there is one and with a
// credential one of its security schemes takes (A2A CLI SPEC §10.1,
// §12.4).
func (e *env) extendedCard(ctx context.Context, public *a2a.AgentCard, url string) error {
	c := e.c
	if !public.GetCapabilities().GetExtendedAgentCard() {
		return a2a.NewError(a2a.CodeExtendedAgentCardNotConfigured, "the agent's card declares no extended card (capabilities.extendedAgentCard)")
	}
	if c.token != "" && !takesBearer(public) {
		return usageError{fmt.Errorf("--extended: the public card declares no security scheme that takes a bearer token, so --bearer is not sent to it")}
	}
	cl, err := c.clientFor(ctx, public, url)
	if err != nil {
		return err
	}
	defer cl.Close()
	card, err := cl.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return e.out.jsonLine(card)
	}
	e.out.printCard(card)
	return nil
}

// takesBearer reports whether one of the card's security schemes takes a
// bearer token: HTTP bearer, OAuth 2.0 or OpenID Connect (spec §4.5).
func takesBearer(card *a2a.AgentCard) bool {
	for _, s := range card.GetSecuritySchemes() {
		switch {
		case strings.EqualFold(s.GetHttpAuthSecurityScheme().GetScheme(), "bearer"),
			s.GetOauth2SecurityScheme() != nil, s.GetOpenIdConnectSecurityScheme() != nil:
			return true
		}
	}
	return false
}

// printCard shows a card in the text form (render.go): a field a line,
// a field repeated for each interface, extension and skill.
func (o *output) printCard(card *a2a.AgentCard) {
	var b strings.Builder
	o.field(&b, "Name", card.GetName())
	o.field(&b, "Version", card.GetVersion())
	if d := card.GetDescription(); strings.Contains(d, "\n") {
		o.block(&b, "Description", d)
	} else {
		o.field(&b, "Description", d)
	}
	if p := card.GetProvider(); p != nil {
		o.field(&b, "Provider", fmt.Sprintf("%s (%s)", p.GetOrganization(), p.GetUrl()))
	}
	if u := card.GetDocumentationUrl(); u != "" {
		o.field(&b, "Documentation", u)
	}
	for i, in := range card.GetSupportedInterfaces() {
		note := "  (not spoken by this build)"
		if spoken(in) {
			note = ""
		}
		tenant := ""
		if in.GetTenant() != "" {
			tenant = " tenant " + in.GetTenant()
		}
		o.field(&b, "Interface", fmt.Sprintf("%d. %-9s %s  A2A %s%s%s", i+1, in.GetProtocolBinding(), in.GetUrl(), in.GetProtocolVersion(), tenant, note))
	}
	o.field(&b, "A2A Versions", servedVersions(card))
	caps := card.GetCapabilities()
	var on []string
	yesNo := func(name string, v bool) {
		if v {
			on = append(on, name)
		}
	}
	yesNo("streaming", caps.GetStreaming())
	yesNo("push notifications", caps.GetPushNotifications())
	yesNo("extended card", caps.GetExtendedAgentCard())
	if len(on) == 0 {
		on = append(on, "none")
	}
	o.field(&b, "Capabilities", strings.Join(on, ", "))
	for _, x := range caps.GetExtensions() {
		req := ""
		if x.GetRequired() {
			req = " (required)"
		}
		o.field(&b, "Extension", x.GetUri()+req)
	}
	o.field(&b, "Input Modes", strings.Join(card.GetDefaultInputModes(), ", "))
	o.field(&b, "Output Modes", strings.Join(card.GetDefaultOutputModes(), ", "))
	if len(card.GetSecuritySchemes()) > 0 {
		var names []string
		for name, s := range card.GetSecuritySchemes() {
			names = append(names, name+" ("+schemeKind(s)+")")
		}
		sort.Strings(names)
		o.field(&b, "Security", strings.Join(names, ", "))
	}
	for _, s := range card.GetSkills() {
		o.field(&b, "Skill", fmt.Sprintf("%s %s: %s", s.GetId(), s.GetName(), strings.ReplaceAll(s.GetDescription(), "\n", " ")))
		if len(s.GetTags()) > 0 {
			o.field(&b, "Skill Tags", strings.Join(s.GetTags(), ", "))
		}
		if len(s.GetExamples()) > 0 {
			q := make([]string, len(s.GetExamples()))
			for i, x := range s.GetExamples() {
				q[i] = fmt.Sprintf("%q", x)
			}
			o.field(&b, "Skill Examples", strings.Join(q, ", "))
		}
	}
	o.printf("%s", b.String()) // the signatures: printSignature
}

// schemeKind names the kind of a security scheme for people.
func schemeKind(s *a2a.SecurityScheme) string {
	switch x := s.GetScheme().(type) {
	case *a2a.SecurityScheme_HttpAuthSecurityScheme:
		return "HTTP " + x.HttpAuthSecurityScheme.GetScheme()
	case *a2a.SecurityScheme_ApiKeySecurityScheme:
		return "API key in " + x.ApiKeySecurityScheme.GetLocation() + " " + x.ApiKeySecurityScheme.GetName()
	case *a2a.SecurityScheme_Oauth2SecurityScheme:
		return "OAuth 2.0"
	case *a2a.SecurityScheme_OpenIdConnectSecurityScheme:
		return "OpenID Connect"
	case *a2a.SecurityScheme_MtlsSecurityScheme:
		return "mutual TLS"
	}
	return "unknown"
}
