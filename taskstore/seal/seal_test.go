package seal_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"parley.dev/parley/taskstore/seal"
)

// fixedKey returns a key made of one repeated byte, so tests are stable.
func fixedKey(b byte) []byte { return bytes.Repeat([]byte{b}, seal.KeySize) }

func mustNew(t *testing.T, keys ...[]byte) *seal.Keys {
	t.Helper()
	k, err := seal.New(keys...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return k
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	k := mustNew(t, fixedKey(1))
	for _, pt := range [][]byte{nil, {}, []byte("x"), []byte(strings.Repeat("secret ", 1000))} {
		sealed := k.Seal(pt, []byte("row 1"))
		if bytes.Contains(sealed, []byte("secret")) {
			t.Fatalf("Seal(%.20q) holds the plaintext", pt)
		}
		got, err := k.Open(sealed, []byte("row 1"))
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("Open(Seal(%.20q)) = %.20q, %v; want the plaintext", pt, got, err)
		}
	}
}

func TestLayout(t *testing.T) {
	t.Parallel()
	k := mustNew(t, fixedKey(1))
	pt := []byte("credential")
	a, b := k.Seal(pt, nil), k.Seal(pt, nil)
	if !bytes.HasPrefix(a, []byte("PSv1")) {
		t.Errorf("sealed value starts %q, want the PSv1 prefix", a[:4])
	}
	if id, err := seal.KeyID(a); err != nil || id != k.IDs()[0] || id != hex.EncodeToString(a[4:8]) {
		t.Errorf("KeyID = %q, %v; want %q at bytes 4..8", id, err, k.IDs()[0])
	}
	if want := 4 + 4 + 12 + len(pt) + 16; len(a) != want {
		t.Errorf("len(sealed) = %d, want %d", len(a), want)
	}
	if bytes.Equal(a[8:20], b[8:20]) || bytes.Equal(a, b) {
		t.Error("two seals of the same plaintext share a nonce")
	}
	if !bytes.Equal(a[:seal.HeaderSize], b[:seal.HeaderSize]) || !bytes.Equal(a[:seal.HeaderSize], k.Header()) {
		t.Errorf("headers %x and %x of two seals under one key, want both %x", a[:seal.HeaderSize], b[:seal.HeaderSize], k.Header())
	}
	// The key id does not depend on randomness, and differs between keys.
	if k2 := mustNew(t, fixedKey(1)); k2.IDs()[0] != k.IDs()[0] {
		t.Errorf("the same key has ids %s and %s", k.IDs()[0], k2.IDs()[0])
	}
	if k3 := mustNew(t, fixedKey(2)); k3.IDs()[0] == k.IDs()[0] {
		t.Error("two keys share an id")
	}
}

// TestRefusals checks that every way of getting a value wrong is an error
// of the documented kind, never a plaintext.
func TestRefusals(t *testing.T) {
	t.Parallel()
	a, b := mustNew(t, fixedKey(1)), mustNew(t, fixedKey(2))
	sealed := a.Seal([]byte("token"), []byte("task-1/p1"))
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 1
		return c
	}
	forged := bytes.Clone(sealed) // names key b, still sealed under a
	copy(forged[4:8], b.Seal(nil, nil)[4:8])
	for _, tc := range []struct {
		name   string
		keys   *seal.Keys
		sealed []byte
		ad     string
		want   error
	}{
		{"wrong key", b, sealed, "task-1/p1", seal.ErrUnknownKey},
		{"other row", a, sealed, "task-2/p1", seal.ErrAuth},
		{"no ad", a, sealed, "", seal.ErrAuth},
		{"prefix changed", a, flip(3), "task-1/p1", seal.ErrFormat},
		{"key id changed", a, flip(5), "task-1/p1", seal.ErrUnknownKey},
		{"key id forged", b, forged, "task-1/p1", seal.ErrAuth},
		{"nonce changed", a, flip(10), "task-1/p1", seal.ErrAuth},
		{"ciphertext changed", a, flip(21), "task-1/p1", seal.ErrAuth},
		{"tag changed", a, flip(len(sealed) - 1), "task-1/p1", seal.ErrAuth},
		{"truncated", a, sealed[:len(sealed)-1], "task-1/p1", seal.ErrAuth},
		{"too short", a, sealed[:20], "task-1/p1", seal.ErrFormat},
		{"plain text", a, []byte("token"), "task-1/p1", seal.ErrFormat},
		{"empty", a, nil, "task-1/p1", seal.ErrFormat},
	} {
		got, err := tc.keys.Open(tc.sealed, []byte(tc.ad))
		if !errors.Is(err, tc.want) || got != nil {
			t.Errorf("%s: Open = %q, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	_, err := b.Open(sealed, []byte("task-1/p1"))
	if msg := err.Error(); !strings.Contains(msg, a.IDs()[0]) || !strings.Contains(msg, b.IDs()[0]) {
		t.Errorf("unknown key error %q does not name the value's key and the keys given", msg)
	}
}

// TestRotation seals under A, opens with [B, A], seals again and opens
// with B alone.
func TestRotation(t *testing.T) {
	t.Parallel()
	ad := []byte("row")
	underA := mustNew(t, fixedKey(0xA)).Seal([]byte("v"), ad)
	both := mustNew(t, fixedKey(0xB), fixedKey(0xA))
	if both.Current(underA) {
		t.Error("Current(value under the old key) = true with the new key first")
	}
	pt, err := both.Open(underA, ad)
	if err != nil || string(pt) != "v" {
		t.Fatalf("[B, A].Open(value under A) = %q, %v", pt, err)
	}
	underB := both.Seal(pt, ad)
	if !both.Current(underB) {
		t.Error("Current(value just sealed) = false")
	}
	onlyB := mustNew(t, fixedKey(0xB))
	if pt, err := onlyB.Open(underB, ad); err != nil || string(pt) != "v" {
		t.Errorf("[B].Open(resealed) = %q, %v", pt, err)
	}
	if _, err := onlyB.Open(underA, ad); !errors.Is(err, seal.ErrUnknownKey) {
		t.Errorf("[B].Open(value under A) error = %v, want ErrUnknownKey", err)
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys [][]byte
	}{
		{"none", nil},
		{"short", [][]byte{make([]byte, 16)}},
		{"long", [][]byte{make([]byte, 64)}},
		{"twice", [][]byte{fixedKey(1), fixedKey(2), fixedKey(1)}},
	} {
		if k, err := seal.New(tc.keys...); err == nil {
			t.Errorf("New(%s) = %v, want an error", tc.name, k.IDs())
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	k1, k2, k3 := fixedKey(1), fixedKey(2), fixedKey(3)
	want := mustNew(t, k1, k2, k3).IDs()
	for _, tc := range []struct{ name, text string }{
		{"lines", seal.Encode(k1) + "\n" + seal.Encode(k2) + "\n" + seal.Encode(k3) + "\n"},
		{"commas", seal.Encode(k1) + "," + seal.Encode(k2) + ", " + seal.Encode(k3)},
		{"mixed forms", "# new key first\n" + hex.EncodeToString(k1) + "  # hex\r\n\n" +
			base64.RawStdEncoding.EncodeToString(k2) + "\n" + base64.URLEncoding.EncodeToString(k3)},
		{"upper hex", strings.ToUpper(hex.EncodeToString(k1)) + " " + base64.RawURLEncoding.EncodeToString(k2) + " " + seal.Encode(k3)},
	} {
		k, err := seal.Parse(tc.text)
		if err != nil {
			t.Errorf("%s: Parse: %v", tc.name, err)
			continue
		}
		if got := strings.Join(k.IDs(), " "); got != strings.Join(want, " ") {
			t.Errorf("%s: Parse ids = %s, want %s", tc.name, got, strings.Join(want, " "))
		}
	}

	// A bad key is named by position; its text is never repeated.
	secretish := "c2VjcmV0LXNlY3JldC1zZWNyZXQ" // base64 of 20 bytes
	for _, text := range []string{"", "# only a comment\n", seal.Encode(k1) + "\n" + secretish, "zz" + strings.Repeat("0", 62)} {
		_, err := seal.Parse(text)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", text)
			continue
		}
		if strings.Contains(err.Error(), secretish) || strings.Contains(err.Error(), "zz00") {
			t.Errorf("Parse error %q repeats the key text", err)
		}
	}
}

func TestNewKey(t *testing.T) {
	t.Parallel()
	a, b := seal.NewKey(), seal.NewKey()
	if len(a) != seal.KeySize || bytes.Equal(a, b) {
		t.Fatalf("NewKey returned %d bytes, equal twice: %v", len(a), bytes.Equal(a, b))
	}
	k, err := seal.Parse(seal.Encode(a))
	if err != nil || k.IDs()[0] != mustNew(t, a).IDs()[0] {
		t.Errorf("Parse(Encode(NewKey())) = %v, %v", k, err)
	}
}

// FuzzOpen feeds Open arbitrary bytes: it must never panic, and must only
// return a plaintext for a value that really was sealed.
func FuzzOpen(f *testing.F) {
	k, _ := seal.New(fixedKey(1))
	f.Add(k.Seal([]byte("token"), []byte("ad")), []byte("ad"))
	f.Add([]byte("PSv1"), []byte(nil))
	f.Add([]byte("PSv1\x00\x00\x00\x00"), []byte("ad"))
	f.Fuzz(func(t *testing.T, sealed, ad []byte) {
		pt, err := k.Open(sealed, ad)
		if err == nil && string(pt) != "token" {
			t.Fatalf("Open(%x) = %q without error", sealed, pt)
		}
	})
}

func Example() {
	// A key file: the new key first, the old one after it.
	text := "# parley push keys\n" + seal.Encode(fixedKey(2)) + "\n" + seal.Encode(fixedKey(1)) + "\n"
	keys, err := seal.Parse(text)
	if err != nil {
		panic(err)
	}
	ad := []byte("task-1/config-1")
	sealed := keys.Seal([]byte("Bearer s3cret"), ad)
	id, _ := seal.KeyID(sealed)
	fmt.Println("sealed under the first key:", id == keys.IDs()[0])

	plain, err := keys.Open(sealed, ad)
	fmt.Printf("%s %v\n", plain, err)
	_, err = keys.Open(sealed, []byte("task-2/config-1"))
	fmt.Println(errors.Is(err, seal.ErrAuth))
	// Output:
	// sealed under the first key: true
	// Bearer s3cret <nil>
	// true
}
