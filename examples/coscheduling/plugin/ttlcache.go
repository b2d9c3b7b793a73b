package coscheduling

import "time"

// ttlCache is the part of github.com/patrickmn/go-cache that upstream uses (Add with a TTL, Get,
// Delete) on the scheduler's clock: entries expire when read past their TTL, with no janitor
// goroutine (a guest has none; docs/abi.md §15.5).
type ttlCache struct {
	now     func() time.Time
	expires map[string]time.Time
}

func newTTLCache(now func() time.Time) *ttlCache {
	return &ttlCache{now: now, expires: map[string]time.Time{}}
}

// Add stores key for ttl unless a live entry exists (go-cache's Add fails then).
func (c *ttlCache) Add(key string, ttl time.Duration) {
	if c.Get(key) {
		return
	}
	c.expires[key] = c.now().Add(ttl)
}

// Get reports whether key holds a live entry; an expired one is dropped.
func (c *ttlCache) Get(key string) bool {
	exp, ok := c.expires[key]
	if !ok {
		return false
	}
	if c.now().After(exp) { // go-cache: expired once now > expiration
		delete(c.expires, key)
		return false
	}
	return true
}

// Delete drops key.
func (c *ttlCache) Delete(key string) { delete(c.expires, key) }
