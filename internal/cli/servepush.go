package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"time"

	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// pushFlags are the push delivery flags of `parley serve`.
type pushFlags struct {
	on           *bool
	allowPrivate *bool
	allowHosts   multiFlag
	timeout      *time.Duration
	maxFailures  *int
	hostRate     *float64
	hostBurst    *int
	guard        *push.Guard  // made by check
	opts         push.Options // more sender options (the telemetry observer)
}

// addPushFlags defines the push delivery flags on fs.
func addPushFlags(fs *flag.FlagSet) *pushFlags {
	p := &pushFlags{
		on:           fs.Bool("push", true, "deliver push notifications (the card declares pushNotifications exactly when on)"),
		allowPrivate: fs.Bool("push-allow-private", false, "allow webhooks on private, loopback and link-local addresses (development, internal networks)"),
		timeout:      fs.Duration("push-timeout", 10*time.Second, "timeout of one webhook POST"),
		maxFailures:  fs.Int("push-max-failures", 20, "consecutive failed deliveries after which a push config is suspended"),
		hostRate:     fs.Float64("push-host-rate", push.DefaultHostRate, "most webhook POSTs a second to one host (a URL's host name, any port), across every push config, task and caller; more wait their turn in the outbox, in order (negative: no bound)"),
		hostBurst:    fs.Int("push-host-burst", push.DefaultHostBurst, "POSTs one host may get at once before --push-host-rate applies"),
	}
	fs.Var(&p.allowHosts, "push-allow-host", "allow webhooks on `HOST` (a name or IP as written in the URL, or a CIDR prefix) whatever its address (repeatable)")
	return p
}

// check makes the SSRF guard of --push-allow-private and
// --push-allow-host, refusing a malformed host or prefix, and refuses a
// --push-host-rate that would send nothing.
func (p *pushFlags) check() error {
	g, err := push.NewGuard(&push.GuardOptions{AllowPrivate: *p.allowPrivate, AllowHosts: p.allowHosts})
	if err != nil {
		return usageError{err}
	}
	if *p.hostRate == 0 {
		return usageError{errors.New("--push-host-rate 0 would send nothing: give a positive rate, or a negative one for no bound")}
	}
	p.guard = g
	return nil
}

// start starts the sender when delivery is on; pusher is nil when it is
// off, and the card then declares pushNotifications false
// (a2ahttp.ServeConfig.Push). stop closes the sender; call it after the
// server is closed.
func (p *pushFlags) start(store taskstore.Store, log *slog.Logger) (pusher server.Pusher, stop func(), err error) {
	if !*p.on {
		log.Info("push notifications are off: the card does not declare them and the config operations answer PushNotificationNotSupportedError")
		return nil, func() {}, nil
	}
	opts := p.opts
	opts.Logger, opts.Guard, opts.Timeout, opts.MaxFailures = log, p.guard, *p.timeout, *p.maxFailures
	opts.HostRate, opts.HostBurst = *p.hostRate, *p.hostBurst
	s, err := push.New(store, &opts)
	if err != nil {
		return nil, nil, err
	}
	if *p.allowPrivate {
		log.Warn("push: webhooks on private, loopback and link-local addresses are allowed (--push-allow-private)")
	} else {
		log.Info("push: webhooks on private, loopback and link-local addresses are refused when registered (--push-allow-private allows them, --push-allow-host one host)")
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			log.Warn("push sender did not stop in time", "err", err)
		}
		st := s.Stats()
		log.Info("push: stopped", "delivered", st.Delivered, "failed_attempts", st.Failures, "dropped", st.Dropped, "suspended", st.Suspended)
	}
	return s, stop, nil
}
