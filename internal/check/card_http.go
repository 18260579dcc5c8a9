package check

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"parley.dev/parley/a2a"
)

// interfaces grades supportedInterfaces: usable URLs, bindings, versions.
func (f *cardFamily) interfaces(_ context.Context, r *rec) bool {
	r.saw(f.res)
	var fails, warns, notes []string
	for i, in := range f.card.GetSupportedInterfaces() {
		name := fmt.Sprintf("supportedInterfaces[%d] (%s)", i, in.GetProtocolBinding())
		switch canonicalBinding(in.GetProtocolBinding()) {
		case a2a.BindingJSONRPC, a2a.BindingHTTPJSON:
			u, err := url.Parse(in.GetUrl())
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				fails = append(fails, fmt.Sprintf("%s: url %q is not an absolute http(s) URL", name, in.GetUrl()))
			} else if u.Scheme == "http" {
				notes = append(notes, fmt.Sprintf("%s uses http (fine for development; production MUST use HTTPS, §7.1)", name))
			}
		case a2a.BindingGRPC:
			// AgentInterface.url for gRPC: a URL at v1.0.1, host:port in
			// a2a.proto after it; both accepted.
		default:
			notes = append(notes, fmt.Sprintf("%s: custom binding (SHOULD be a URI, §5.8)", name))
		}
		v := in.GetProtocolVersion()
		if parts := strings.Split(v, "."); len(parts) > 2 {
			warns = append(warns, fmt.Sprintf("%s: protocolVersion %q carries a patch number", name, v))
		}
	}
	note := ""
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	switch {
	case len(fails) > 0:
		r.fail("%s%s", strings.Join(fails, "; "), note)
	case len(warns) > 0:
		r.warn("%s%s", strings.Join(warns, "; "), note)
	default:
		r.pass("%d interfaces%s", len(f.card.GetSupportedInterfaces()), note)
	}
	return true
}

// cachingHeaders grades the card's HTTP caching headers (§8.6).
func (f *cardFamily) cachingHeaders(_ context.Context, r *rec) bool {
	r.saw(f.res)
	h := f.res.ex.Header
	cc, etag, lm := h.Get("Cache-Control"), h.Get("ETag"), h.Get("Last-Modified")
	var missing []string
	if !strings.Contains(strings.ToLower(cc), "max-age") {
		missing = append(missing, "Cache-Control max-age")
	}
	if etag == "" {
		missing = append(missing, "ETag")
	}
	if len(missing) > 0 {
		r.warn("missing: %s (Cache-Control %q, Last-Modified %q)", strings.Join(missing, ", "), cc, lm)
	} else {
		r.pass("Cache-Control %q, ETag %s, Last-Modified %q", cc, etag, lm)
	}
	return true
}

// conditional revalidates the card with its ETag or Last-Modified.
func (f *cardFamily) conditional(ctx context.Context, r *rec) bool {
	h := f.res.ex.Header
	extra := http.Header{}
	switch {
	case h.Get("ETag") != "":
		extra.Set("If-None-Match", h.Get("ETag"))
	case h.Get("Last-Modified") != "":
		extra.Set("If-Modified-Since", h.Get("Last-Modified"))
	default:
		r.na("no ETag or Last-Modified to revalidate with")
		return true
	}
	cres := f.s.fetchCard(ctx, extra)
	switch {
	case !r.gradable(cres):
	case cres.ex.Status == http.StatusNotModified:
		r.pass("304 Not Modified")
	default:
		r.warn("HTTP %d: the server does not revalidate", cres.ex.Status)
	}
	return true
}
