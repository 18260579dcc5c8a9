package sqlstore

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
)

var errNone = errors.New("no rows")

var (
	question = &Dialect{Name: "q", False: "0", NullBytes: "NULL", ScopeIs: "=", NoRows: errNone, Transient: func(error) bool { return false }}
	numbered = &Dialect{Name: "n", Numbered: true, False: "false", NullBytes: "NULL::bytea", ScopeIs: "IS NOT DISTINCT FROM",
		NoRows: errNone, Transient: func(error) bool { return false }}
)

func TestBind(t *testing.T) {
	const q = `SELECT a FROM t WHERE b = ? AND c IN (?, ?)`
	if got := question.Bind(q); got != q {
		t.Errorf("question.Bind = %q", got)
	}
	if got, want := numbered.Bind(q), `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`; got != want {
		t.Errorf("numbered.Bind = %q, want %q", got, want)
	}
	if got, want := numbered.TaskByID("t", 1), `t.id = $1 AND t.tenant IS NOT DISTINCT FROM $2 AND t.owner IS NOT DISTINCT FROM $3`; got != want {
		t.Errorf("TaskByID = %q, want %q", got, want)
	}
}

// TestListSQL checks that every filter combination numbers its
// parameters as ListArgs gives them, the limit last.
func TestListSQL(t *testing.T) {
	q := taskstore.ListQuery{ContextID: "c", State: 3, Since: time.UnixMilli(5),
		After: &taskstore.Cursor{Time: time.UnixMilli(9), ID: "x"}}
	for f := range layout.ListFilter(16) {
		args := ListArgs(f, taskstore.Scope{Tenant: "t", Owner: "o"}, q)
		list := numbered.ListSQL(f)
		var got []string
		for _, m := range regexp.MustCompile(`\$\d+`).FindAllString(list, -1) {
			got = append(got, m[1:])
		}
		want := make([]string, len(args)+1)
		for i := range want {
			want[i] = strconv.Itoa(i + 1)
		}
		if !slices.Equal(got, want) {
			t.Errorf("filter %04b: %q numbers its parameters %v, want %v", f, list, got, want)
		}
		if !strings.HasSuffix(list, "LIMIT $"+strconv.Itoa(len(args)+1)) {
			t.Errorf("filter %04b: %q does not end with its limit", f, list)
		}
		if n := strings.Count(question.ListSQL(f), "?"); n != len(args)+1 {
			t.Errorf("filter %04b: %d placeholders for %d arguments", f, n, len(args)+1)
		}
	}
}

func TestRefused(t *testing.T) {
	for _, err := range []error{nil, taskstore.ErrNotFound, taskstore.ErrSeq, taskstore.ErrExists, taskstore.ErrFenced} {
		if got := question.Refused("op", err); got != err {
			t.Errorf("Refused(%v) = %v", err, got)
		}
	}
	other := errors.New("boom")
	if got := question.Refused("op", other); !errors.Is(got, other) || got.Error() != "q: op: boom" {
		t.Errorf("Refused(boom) = %v", got)
	}
}

func TestCleanup(t *testing.T) {
	var cuts []int64
	steps := []int{DeleteBatch, DeleteBatch, 3}
	n, err := question.Cleanup("op", time.UnixMilli(10).Add(time.Microsecond), func(cut int64) (int, error) {
		cuts = append(cuts, cut)
		k := steps[0]
		steps = steps[1:]
		return k, nil
	})
	if err != nil || n != 2*DeleteBatch+3 || len(cuts) != 3 || cuts[0] != 11 {
		t.Errorf("Cleanup = %d, %v after cuts %v", n, err, cuts)
	}
}
