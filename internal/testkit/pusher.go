package testkit

import (
	"context"

	"parley.dev/parley/taskstore"
)

// NoDelivery is a server.Pusher for tests that exercise the push
// configuration operations without delivering anything: it accepts every
// webhook URL and ignores what is queued (the store's outbox keeps it).
// server.New requires a Pusher whenever the card declares
// pushNotifications; production code uses a push.Sender.
type NoDelivery struct{}

// CheckURL accepts every URL.
func (NoDelivery) CheckURL(context.Context, string) error { return nil }

// Queued does nothing.
func (NoDelivery) Queued(string) {}

// Forget does nothing.
func (NoDelivery) Forget(taskstore.PushTarget) {}
