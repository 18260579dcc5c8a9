package a2a

import "sync"

// EventCache keeps the encodings of one event's StreamResponse that the
// streams carrying the event share: the server core publishes an event to
// all of a task's subscribers as the same *StreamResponse, and with an
// EventCache attached (StreamEvent.Cache) each transport encodes it once
// per wire format, whatever the number of streams, and writes the same
// bytes to each (the JSON-RPC binding writes its envelope, which carries
// each request's own id, around the shared result).
//
// A cache belongs to the Response it was made for: Load makes, without
// keeping it, the value asked for any other Response (a middleware that
// replaces an event's Response, or trims a copy for one stream, therefore
// gets its own encoding). The values kept must not be modified. It is
// safe for concurrent use; a nil *EventCache keeps nothing.
type EventCache struct {
	resp *StreamResponse
	mu   sync.Mutex
	n    int
	vals [4]cached // most events are encoded in one or two formats
	more []cached
}

// cached is one value of an EventCache.
type cached struct {
	key string
	val any
}

// NewEventCache returns an empty cache for resp.
func NewEventCache(resp *StreamResponse) *EventCache {
	return &EventCache{resp: resp}
}

// Holds reports whether c keeps values for resp: c is not nil and was
// made for resp. A transport that finds it does not encodes the event as
// it would without a cache (into its own buffer, say).
func (c *EventCache) Holds(resp *StreamResponse) bool {
	return c != nil && resp != nil && c.resp == resp
}

// Load returns the value kept under key (a transport's name for a wire
// format, such as "json") for resp, calling build for it the first time.
// Concurrent callers asking for the same key wait for the first one's
// build rather than repeating it. An error from build is returned and not
// kept. When the cache does not hold resp (Holds), Load is build().
func (c *EventCache) Load(resp *StreamResponse, key string, build func() (any, error)) (any, error) {
	if !c.Holds(resp) {
		return build()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range min(c.n, len(c.vals)) {
		if c.vals[i].key == key {
			return c.vals[i].val, nil
		}
	}
	for _, v := range c.more {
		if v.key == key {
			return v.val, nil
		}
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	if c.n < len(c.vals) {
		c.vals[c.n] = cached{key, v}
	} else {
		c.more = append(c.more, cached{key, v})
	}
	c.n++
	return v, nil
}

// LoadBytes is Load for a value that is an encoding: it returns the bytes
// kept under key for resp, calling encode for them the first time.
func (c *EventCache) LoadBytes(resp *StreamResponse, key string, encode func() ([]byte, error)) ([]byte, error) {
	if !c.Holds(resp) {
		return encode()
	}
	v, err := c.Load(resp, key, func() (any, error) {
		b, err := encode()
		if err != nil {
			return nil, err
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}
