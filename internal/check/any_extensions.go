package check

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
)

// extensionsHeader is the service parameter a client activates
// extensions with (spec §3.2.6, §4.6.1).
const extensionsHeader = "A2A-Extensions"

// extensionSteps grade what the agent does with the extensions its card
// marks required.
var extensionSteps = []step[*bindingRun]{
	{Result{ID: "extensions.required", Operation: a2a.MethodGetTask, Title: "a call that does not activate a required extension is ExtensionSupportRequiredError",
		Level: "MUST", Section: "§3.3.4, §4.6.3, §5.4",
		Requires: "When a server requests use of an extension marked as required: true in the Agent Card but the client does not declare support for it, the agent MUST return ExtensionSupportRequiredError (-32008 / 400 / FAILED_PRECONDITION)"},
		(*bindingRun).extensionRequired},
}

// requiredExtensions are the URIs of the extensions card marks required.
func requiredExtensions(card *a2a.AgentCard) []string {
	var uris []string
	for _, e := range card.GetCapabilities().GetExtensions() {
		if e.GetRequired() && e.GetUri() != "" {
			uris = append(uris, e.GetUri())
		}
	}
	return uris
}

// activatedExtensions are the URIs that h activates.
func activatedExtensions(h http.Header) []string {
	var uris []string
	for _, line := range h.Values(extensionsHeader) {
		for _, uri := range strings.Split(line, ",") {
			if uri = strings.TrimSpace(uri); uri != "" {
				uris = append(uris, uri)
			}
		}
	}
	return uris
}

// activateRequired adds to h the required extensions of card that it does
// not activate yet, and returns them. The checks grade the protocol, which
// a required extension would otherwise keep them from reaching: every
// call would be refused. extensions.required sends one call without them.
func activateRequired(card *a2a.AgentCard, h http.Header) []string {
	have := activatedExtensions(h)
	var added []string
	for _, uri := range requiredExtensions(card) {
		if !slices.Contains(have, uri) {
			added = append(added, uri)
		}
	}
	if len(added) > 0 {
		// Clipped: h may share its slices with Options.Header.
		key := http.CanonicalHeaderKey(extensionsHeader)
		h[key] = append(slices.Clip(h[key]), strings.Join(added, ", "))
	}
	return added
}

// extensionRequired: GetTask of an unknown task without the A2A-Extensions
// header, when the card marks an extension required, is refused with
// ExtensionSupportRequiredError rather than answered.
func (b *bindingRun) extensionRequired(ctx context.Context, r *rec) {
	uris := requiredExtensions(b.s.card)
	if len(uris) == 0 {
		r.na("the card marks no extension required")
		return
	}
	res := b.getUnknown(ctx, callOpts{noExtensions: true})
	b.probes["GetTask without the required extensions"] = outcomeKey(res)
	r.expectThen(b.t.binding, res, a2a.CodeExtensionSupportRequired, func(_ *Verdict, finding *string) {
		*finding += " (the other checks activate " + strings.Join(uris, ", ") + " with " + extensionsHeader + ")"
	})
}
