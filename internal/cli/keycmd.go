package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/authn"
	"parley.dev/parley/cardsign"
)

// keySynopsis is the usage of `parley key`.
const keySynopsis = `key new|jwks [flags]

key new writes a new private key (PEM, PKCS #8) for signing agent cards:
to --out, created with mode 0600, or to standard output; its key id (the
RFC 7638 thumbprint) goes to standard error. key jwks FILE prints the
public JWKS of the private key in FILE: publish it (at the --sign-card-jku
URL, say) or give it to clients (parley card URL --verify-key FILE).`

// keyCmd runs `parley key new|jwks`.
func keyCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	alg := fs.String("alg", "ES256", "key new: the algorithm, `ES256` (EC P-256), EdDSA (Ed25519) or RS256 (RSA 3072)")
	out := fs.String("out", "", "key new: write the key to `FILE` (mode 0600) instead of standard output")
	kid := fs.String("kid", "", "key jwks: the key id `KID` in the JWKS (default: the thumbprint; give the --sign-card-kid of the server)")
	if len(args) == 0 {
		return usageError{errors.New("want key new or key jwks FILE")}
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		return parseCommandFlags(fs, []string{"-h"}, "key", keySynopsis, stdout)
	}
	pos, err := parseInterleaved(fs, args[1:], "key", keySynopsis, stdout)
	if err != nil {
		return err
	}
	switch {
	case sub == "new" && len(pos) == 0:
		return keyNew(*alg, *out, stdout, stderr)
	case sub == "jwks" && len(pos) == 1:
		return keyJWKS(pos[0], *kid, stdout)
	}
	return usageError{errors.New("want key new [--alg ES256|EdDSA|RS256] [--out FILE] or key jwks FILE")}
}

// keyNew writes a new private key.
func keyNew(alg, out string, stdout, stderr io.Writer) error {
	key, err := cardsign.GenerateKey(alg)
	if err != nil {
		return usageError{fmt.Errorf("--alg: %v", err)}
	}
	pemText, err := cardsign.EncodePrivateKey(key)
	if err != nil {
		return err
	}
	kid, err := cardsign.KeyID(key.Public())
	if err != nil {
		return err
	}
	if out == "" {
		if _, err := stdout.Write(pemText); err != nil {
			return err
		}
	} else {
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := f.Write(pemText); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "parley key: new %s key, key id %s\n", alg, kid)
	return nil
}

// keyJWKS prints the public JWKS of a private key file.
func keyJWKS(file, kid string, stdout io.Writer) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	key, alg, err := cardsign.ParsePrivateKey(b)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	jwk, err := cardsign.PublicJWK(key, alg, kid)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// apikeySynopsis is the usage of `parley apikey`.
const apikeySynopsis = `apikey new NAME [--rights R1,R2]

Makes a new API key for the caller NAME. The key is printed once, on the
first line: give it to the caller, who sends it as the X-API-Key header.
The second line is what to add to the --api-keys file of parley serve: the
name and the key's SHA-256, never the key. To revoke the key, delete its
line and send the server SIGHUP (or restart it). With --rights the key may
do only what those rights allow (spec §3.3.2); its line then carries them
as its third field.`

// apikeyCmd runs `parley apikey new NAME`.
func apikeyCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley apikey", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rightsList := fs.String("rights", "", "give the key only these `RIGHTS`, separated by commas ("+a2a.Rights(a2a.KnownRights()).String()+"); without it the key has every right")
	pos, err := parseInterleaved(fs, args, "apikey", apikeySynopsis, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "new" {
		return usageError{errors.New("want apikey new NAME")}
	}
	var rights a2a.Rights // nil: every right
	if *rightsList != "" {
		if rights, err = a2a.ParseRights(*rightsList); err != nil {
			return usageError{fmt.Errorf("--rights: %w", err)}
		}
	}
	key, line, err := authn.NewAPIKeyWithRights(pos[1], rights)
	if err != nil {
		return usageError{err}
	}
	_, err = fmt.Fprintf(stdout, "%s\n%s\n", key, line)
	return err
}

// parseInterleaved parses flags placed before, between or after the
// positional arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string, name, synopsis string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parseCommandFlags(fs, args, name, synopsis, stdout); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
