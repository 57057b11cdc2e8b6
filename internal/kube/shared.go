package kube

import (
	"context"
	"sync"
	"time"
)

// shared holds, by key, what reads of the cluster returned for the whole provider process: a
// plan of 300 jobs asks the same questions (is this group served, what are the nodes, this
// namespace's labels, Kueue's configuration) 300 times, and the cluster is asked once.
//
//   - Callers of one key wait for the one read in flight.
//   - A value is kept until forget.
//   - An error is kept for failedReadLife, so that a plan on a cluster that does not answer
//     does not wait once per job, and is read again after it: a cluster that answers again (or
//     an operator installed since) is seen by the next check.
//   - An error of a read whose caller was cancelled is that caller's own and is not kept: the
//     callers waiting on it, and the next ones, read again.
type shared[K comparable, V any] struct {
	mu sync.Mutex
	by map[K]*sharedRead[V]
	// failedReadLife overrides how long an error is kept (tests); zero is failedReadLife.
	failedReadLife time.Duration
}

// failedReadLife is how long a shared read's error answers the callers after it.
const failedReadLife = 10 * time.Second

// sharedRead is one read of a key.
type sharedRead[V any] struct {
	done      chan struct{} // closed when the read returned
	value     V
	err       error
	at        time.Time // when it returned
	abandoned bool      // its caller was cancelled before the cluster answered
}

// get returns key's value, reading it with read (given the caller's context) when no read of it
// is held or in flight.
func (s *shared[K, V]) get(ctx context.Context, key K, read func(context.Context) (V, error)) (V, error) {
	for {
		s.mu.Lock()
		r := s.by[key]
		if r != nil && r.stale(s.life()) {
			r = nil
		}
		if r == nil {
			r = &sharedRead[V]{done: make(chan struct{})}
			if s.by == nil {
				s.by = map[K]*sharedRead[V]{}
			}
			s.by[key] = r
			s.mu.Unlock()
			s.read(ctx, key, r, read)
			return r.value, r.err
		}
		s.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			var none V
			return none, ctx.Err()
		}
		if !r.abandoned {
			return r.value, r.err
		}
	}
}

// read runs read for r, and drops r when its caller was cancelled before the cluster answered.
func (s *shared[K, V]) read(ctx context.Context, key K, r *sharedRead[V], read func(context.Context) (V, error)) {
	defer close(r.done)
	r.value, r.err = read(ctx)
	r.at = time.Now()
	if r.err != nil && ctx.Err() != nil {
		r.abandoned = true
		s.mu.Lock()
		if s.by[key] == r {
			delete(s.by, key)
		}
		s.mu.Unlock()
	}
}

// stale says whether a read that returned an error longer than life ago should be read again.
func (r *sharedRead[V]) stale(life time.Duration) bool {
	select {
	case <-r.done:
		return r.err != nil && time.Since(r.at) >= life
	default:
		return false
	}
}

func (s *shared[K, V]) life() time.Duration {
	if s.failedReadLife != 0 {
		return s.failedReadLife
	}
	return failedReadLife
}

// forget drops what was read of key: the next caller reads it again.
func (s *shared[K, V]) forget(key K) {
	s.mu.Lock()
	delete(s.by, key)
	s.mu.Unlock()
}
