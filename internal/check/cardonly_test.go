package check_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"parley.dev/parley/internal/check"
	"parley.dev/parley/internal/testkit"
)

// TestCheckCard: the card checks alone pass on Parley's own card, and a
// card lacking REQUIRED members fails card.required.
func TestCheckCard(t *testing.T) {
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true})
	rep, card, err := check.CheckCard(context.Background(), check.Options{URL: srv.URL})
	if err != nil || card == nil || rep.Counts.Fail != 0 || len(rep.Find("card.required")) != 1 || len(rep.Find("B1.wire")) != 0 {
		t.Fatalf("CheckCard = %+v, %v, %v; want the card checks alone, passing", rep, card, err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"x","supportedInterfaces":[{"url":"http://127.0.0.1:1","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`))
	}))
	defer bad.Close()
	rep, _, err = check.CheckCard(context.Background(), check.Options{URL: bad.URL})
	if err != nil || rep.Counts.Fail == 0 {
		t.Fatalf("CheckCard(bad card) = %+v, %v; want a failed MUST", rep, err)
	}
}
