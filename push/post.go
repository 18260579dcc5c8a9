package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// outcome classifies one attempt.
type outcome int

const (
	delivered outcome = iota
	retry             // network error, timeout, 5xx, 429
	drop              // any other answer, a refused address, a bad URL
)

// payload is what every attempt at one notification sends, worked out
// once before the first (see prepare).
type payload struct {
	body []byte // the encoded event
	bad  string // when not "", why the notification cannot be sent at all
}

// prepare checks a notification's webhook URL and encodes its event, for
// all the attempts at it.
func prepare(n *taskstore.Notification) payload {
	if _, err := ParseURL(n.Config.GetUrl()); err != nil {
		return payload{bad: "webhook URL " + err.Error()}
	}
	body, err := encodeEvent(n)
	if err != nil {
		return payload{bad: "the event could not be encoded: " + err.Error()}
	}
	return payload{body: body}
}

// attempt makes one POST of p, prepared from n. For a retry it returns
// the receiver's Retry-After (0 when none); for a failure, a reason, which
// is logged and, on suspension, stored: it is scrubbed of the
// configuration's secrets (see scrub).
func (s *Sender) attempt(ctx context.Context, n *taskstore.Notification, p payload) (outcome, time.Duration, string) {
	ctx, end := s.observe(ctx, n)
	out, wait, why := s.post(ctx, n, p)
	why = scrub(why, n.Config.TaskPushNotificationConfig)
	end(AttemptResult{Delivered: out == delivered, Retry: out == retry, Reason: why})
	return out, wait, why
}

// post makes one POST; see attempt. No reason it returns quotes the
// webhook URL: net/http puts the whole URL, query string included, in
// front of its errors (*url.Error), which errText takes off.
func (s *Sender) post(ctx context.Context, n *taskstore.Notification, p payload) (outcome, time.Duration, string) {
	s.attempts.Add(1)
	if p.bad != "" {
		return drop, 0, p.bad
	}
	cfg, body := n.Config, p.body
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.GetUrl(), bytes.NewReader(body))
	if err != nil {
		return drop, 0, "the request could not be made: " + errText(err)
	}
	SetHeaders(req.Header, cfg.TaskPushNotificationConfig)
	if o := s.opts.Observer; o != nil {
		o.Header(ctx, req.Header)
	}
	setVersionHeaders(req.Header, cfg)
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return retry, 0, "no free connection slot before the timeout"
	}
	resp, err := s.client.Do(req)
	<-s.sem
	if err != nil {
		if errors.Is(err, ErrForbiddenAddress) {
			return drop, 0, errText(err)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return retry, 0, fmt.Sprintf("no answer within %v", s.opts.Timeout)
		}
		return retry, 0, errText(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return delivered, 0, ""
	case code == http.StatusTooManyRequests || code >= 500:
		return retry, retryAfter(resp.Header.Get("Retry-After"), time.Now()), "the receiver answered " + resp.Status
	default:
		return drop, 0, "the receiver answered " + resp.Status + " (not retried)"
	}
}

// ContentType is the media type of a push notification body.
const ContentType = "application/a2a+json"

// SetHeaders sets the headers of a notification for a configuration:
// Content-Type, A2A-Version, Authorization from its authentication, and
// its token under both A2A-Notification-Token and X-A2A-Notification-Token.
func SetHeaders(h http.Header, cfg *a2a.TaskPushNotificationConfig) {
	h.Set("Content-Type", ContentType)
	h.Set("A2A-Version", a2a.ProtocolVersion)
	h.Set("User-Agent", "parley-push/"+a2a.ProtocolVersion)
	if auth := cfg.GetAuthentication(); auth != nil && auth.GetScheme() != "" {
		v := auth.GetScheme()
		if auth.GetCredentials() != "" {
			v += " " + auth.GetCredentials()
		}
		h.Set("Authorization", v)
	}
	if tok := cfg.GetToken(); tok != "" {
		h.Set("A2A-Notification-Token", tok)
		h.Set("X-A2A-Notification-Token", tok)
	}
}
