// Package pushseal splits a push notification configuration into the part
// a store may keep readable and the secrets it seals with package
// taskstore/seal (spec §13.2: agents SHOULD store push credentials
// securely), and puts them back together. The secrets are the webhook URL,
// the token and the authentication credentials; they are sealed bound to
// the configuration's scope, task and id, so a sealed value moved to
// another row does not open.
//
// sqlitestore and pgstore both seal with it, so a value sealed by one
// store opens in the other.
package pushseal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/seal"
)

// ErrNoKey is returned when a configuration holds sealed secrets and no
// keys were given.
var ErrNoKey = errors.New("the database holds encrypted push credentials and no push key was given")

// AD is the additional data a configuration's secrets are sealed with:
// the row's scope and identity, each field length-prefixed.
func AD(sc taskstore.Scope, taskID, configID string) []byte {
	b := []byte("parley push config secrets v1")
	for _, f := range []string{sc.Tenant, sc.Owner, taskID, configID} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// Seal encodes c (of scope sc) for storage. Without keys, data is c and
// secret nil; with keys, data is c without its URL, token and credentials,
// and secret their seal under the first key.
func Seal(keys *seal.Keys, sc taskstore.Scope, c *a2a.TaskPushNotificationConfig) (data, secret []byte, err error) {
	if keys == nil {
		data, err = proto.Marshal(c)
		return data, nil, err
	}
	public := proto.CloneOf(c)
	public.Url, public.Token = "", ""
	secrets := &a2a.TaskPushNotificationConfig{Url: c.GetUrl(), Token: c.GetToken()}
	if public.Authentication != nil {
		public.Authentication.Credentials = ""
		if cred := c.GetAuthentication().GetCredentials(); cred != "" {
			secrets.Authentication = &a2a.AuthenticationInfo{Credentials: cred}
		}
	}
	if data, err = proto.Marshal(public); err != nil {
		return nil, nil, err
	}
	plain, err := proto.Marshal(secrets)
	if err != nil {
		return nil, nil, err
	}
	if plain == nil {
		plain = []byte{}
	}
	return data, keys.Seal(plain, AD(sc, c.GetTaskId(), c.GetId())), nil
}

// Open decodes a stored configuration, putting its sealed secrets, when
// secret is not nil, back in place. A secret that does not open is an
// error naming the configuration, never a configuration without its
// credentials.
func Open(keys *seal.Keys, sc taskstore.Scope, taskID, configID string, data, secret []byte) (*a2a.TaskPushNotificationConfig, error) {
	c := new(a2a.TaskPushNotificationConfig)
	if err := proto.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("decode push config: %w", err)
	}
	if secret == nil {
		return c, nil
	}
	fail := func(err error) error {
		return fmt.Errorf("push config %q of task %q: %w", configID, taskID, err)
	}
	if keys == nil {
		return nil, fail(ErrNoKey)
	}
	plain, err := keys.Open(secret, AD(sc, taskID, configID))
	if err != nil {
		return nil, fail(err)
	}
	secrets := new(a2a.TaskPushNotificationConfig)
	if err := proto.Unmarshal(plain, secrets); err != nil {
		return nil, fail(fmt.Errorf("decode secrets: %w", err))
	}
	// The sealed values replace whatever the readable part holds in their
	// place, so changing that part cannot redirect the credentials.
	c.Url, c.Token = secrets.GetUrl(), secrets.GetToken()
	if cred := secrets.GetAuthentication().GetCredentials(); cred != "" {
		if c.Authentication == nil {
			c.Authentication = &a2a.AuthenticationInfo{}
		}
		c.Authentication.Credentials = cred
	} else if c.Authentication != nil {
		c.Authentication.Credentials = ""
	}
	return c, nil
}
