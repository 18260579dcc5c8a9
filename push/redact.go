package push

import (
	"cmp"
	"errors"
	"net/url"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
)

// What the Sender writes down about a webhook (log lines, the reason of a
// suspension kept in the store, Stats) holds none of the configuration's
// secrets (spec §13.2, §13.4: tokens and credentials are secrets). A webhook
// URL can carry them too: in its query (?api_key=...), its user information,
// and, for capability URLs such as many chat services hand out, its path. So
// a URL is written as its scheme and host only (redact), errors lose the URL
// that net/http puts in front of them (errText), and every reason is scrubbed
// of whatever secret still made its way in, for instance a receiver that
// echoes its query string in its status line (scrub).

// redact returns the form of a webhook URL fit for logs: scheme, host and
// port, followed by "/…" when the URL has more (path, query, fragment),
// which is left out.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(invalid URL)"
	}
	s := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		s += "/…"
	}
	return s
}

// errText returns err's message without the request URL that net/http
// wraps around its errors (*url.Error, whose message quotes the whole URL).
func errText(err error) string {
	var ue *url.Error
	for errors.As(err, &ue) {
		err = ue.Err
	}
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// redacted replaces a secret in a reason.
const redacted = "[redacted]"

// minSecret is the shortest value scrub looks for: a shorter one cannot be
// told apart from ordinary words of the message.
const minSecret = 4

// scrub replaces every secret of cfg found in msg (see secrets) by
// "[redacted]".
func scrub(msg string, cfg *a2a.TaskPushNotificationConfig) string {
	if msg == "" {
		return msg
	}
	for _, s := range secrets(cfg) {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return msg
}

// secrets returns what must not be written down about cfg, longest first
// (so that a URL goes as a whole rather than piece by piece): the URL in
// every form, its path, query, query values, fragment and user
// information, the authentication credentials and the token.
func secrets(cfg *a2a.TaskPushNotificationConfig) []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if len(v) >= minSecret && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	raw := cfg.GetUrl()
	add(raw)
	if u, err := url.Parse(raw); err == nil {
		add(u.String(), u.Redacted(), u.RawQuery, u.Fragment, u.EscapedFragment())
		if u.Path != "/" {
			add(u.Path, u.EscapedPath())
		}
		for _, kv := range strings.Split(u.RawQuery, "&") {
			_, v, _ := strings.Cut(kv, "=")
			add(v)
			if uv, err := url.QueryUnescape(v); err == nil {
				add(uv)
			}
		}
		if u.User != nil {
			add(u.User.String(), u.User.Username())
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
	}
	if auth := cfg.GetAuthentication(); auth != nil {
		add(auth.GetCredentials())
	}
	add(cfg.GetToken())
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}
