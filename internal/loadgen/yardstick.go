package loadgen

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// YardstickPath is where the ceiling and floor responders say which one
// they are (the body "ceiling" or "floor"), so that a side-by-side run
// can print every other server's CPU per request as a multiple of
// theirs. An A2A server answers it 404.
const YardstickPath = "/.well-known/parley-yardstick"

// yardstick serves YardstickPath with kind, and every other path with h.
func yardstick(kind string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == YardstickPath {
			io.WriteString(w, kind)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// yardstickKind asks the server at base which yardstick it is: "ceiling",
// "floor", or "" for any other server (or one that does not answer).
func yardstickKind(ctx context.Context, base string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+YardstickPath, nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16))
	if kind := string(b); resp.StatusCode == http.StatusOK && (kind == "ceiling" || kind == "floor") {
		return kind
	}
	return ""
}
