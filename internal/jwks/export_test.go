package jwks

// Idle waits until c has no fetch under way, so that a test can look at
// what a background refresh left.
func Idle(c *Cache) {
	c.mu.Lock()
	cl := c.inflight
	c.mu.Unlock()
	if cl != nil {
		<-cl.done
	}
}

// Waiters is how many callers of Keys wait for the fetch under way.
func Waiters(c *Cache) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight == nil {
		return 0
	}
	return c.inflight.waiters
}

// MaxAge is maxAge, for its table test.
var MaxAge = maxAge
