package inspect_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parley.dev/parley/internal/inspect"
	"parley.dev/parley/internal/testkit"
)

// TestOneTimeCode: the page URL carries a one-time code and not the
// token; the code buys an HttpOnly, SameSite=Strict cookie once, and is
// refused after; the cookie authorises the API only with the page's
// marker header and not from another site; the token still works for
// programs.
func TestOneTimeCode(t *testing.T) {
	ln, err := inspect.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := inspect.New(inspect.Options{Target: "http://127.0.0.1:9", Logger: testkit.DiscardLogger})
	go s.Serve(ln)
	base := "http://" + ln.Addr().String()
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	page := s.PageURL(ln)
	if strings.Contains(page, s.Token()) || strings.Contains(page, "token") {
		t.Fatalf("the page URL %q carries the token", page)
	}
	u, _ := url.Parse(page)
	frag, _ := url.ParseQuery(u.Fragment)
	code := frag.Get("code")
	if len(code) < 32 || frag.Get("url") != "http://127.0.0.1:9" {
		t.Fatalf("page URL %q: want a code and the target in the fragment", page)
	}

	exchange := func(code string, mutate func(*http.Request)) *http.Response {
		resp, _ := do(t, "POST", base+inspect.SessionPath, "", code, mutate)
		return resp
	}
	if resp := exchange(code, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") }); resp.StatusCode != http.StatusForbidden {
		t.Errorf("exchange from another site: %d, want 403", resp.StatusCode)
	}
	if resp := exchange("0123456789abcdef0123456789abcdef", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an unknown code: %d, want 403", resp.StatusCode)
	}
	resp := exchange(code, nil)
	if resp.StatusCode != http.StatusNoContent || len(resp.Cookies()) != 1 {
		t.Fatalf("first exchange: %d, cookies %v; want 204 and one cookie", resp.StatusCode, resp.Cookies())
	}
	cookie := resp.Cookies()[0]
	raw := resp.Header.Get("Set-Cookie")
	if cookie.Name != "parley-inspect-"+port || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" ||
		!strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") || strings.Contains(raw, s.Token()) {
		t.Errorf("cookie %q: want parley-inspect-%s, HttpOnly, SameSite=Strict, Path=/, not the token", raw, port)
	}
	if resp := exchange(code, nil); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("second exchange of the code: %d %v, want 403 and no cookie", resp.StatusCode, resp.Cookies())
	}

	info := func(header string, c *http.Cookie, site string) int {
		resp, _ := do(t, "GET", base+"/api/info", header, "", func(r *http.Request) {
			if c != nil {
				r.AddCookie(c)
			}
			if site != "" {
				r.Header.Set("Sec-Fetch-Site", site)
			}
		})
		return resp.StatusCode
	}
	wrong := &http.Cookie{Name: cookie.Name, Value: strings.Repeat("0", len(cookie.Value))}
	for _, tc := range []struct {
		what   string
		header string
		cookie *http.Cookie
		site   string
		want   int
	}{
		{"the page: cookie and marker", inspect.SessionMarker, cookie, "same-origin", 200},
		{"cookie and marker, no Sec-Fetch-Site", inspect.SessionMarker, cookie, "", 200},
		{"cookie without the marker header", "", cookie, "same-origin", 403},
		{"cookie from another site", inspect.SessionMarker, cookie, "same-site", 403},
		{"cookie from a cross-site page", inspect.SessionMarker, cookie, "cross-site", 403},
		{"marker without the cookie", inspect.SessionMarker, nil, "", 403},
		{"a wrong cookie", inspect.SessionMarker, wrong, "", 403},
		{"the token, for programs", s.Token(), nil, "", 200},
	} {
		if got := info(tc.header, tc.cookie, tc.site); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.want)
		}
	}

	// Each page URL has a code of its own.
	u2, _ := url.Parse(s.PageURL(ln))
	frag2, _ := url.ParseQuery(u2.Fragment)
	if c2 := frag2.Get("code"); c2 == code {
		t.Error("a second page URL reuses the first code")
	} else if resp := exchange(c2, nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("a second page URL's code: %d, want 204", resp.StatusCode)
	}
}
