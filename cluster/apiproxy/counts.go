package apiproxy

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// What the proxy counted of the requests it received.

// Requests is how many requests the proxy received.
func (p *Proxy) Requests() int64 { return p.requests.Load() }

// ResetCounts zeroes the request, verb and fault counts.
func (p *Proxy) ResetCounts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests.Store(0)
	p.counts = map[string]int64{}
	p.faults = map[Fault]int64{}
	p.faultedVerbs = map[string]int64{}
	p.watchPaths = map[string]int64{}
	p.reads = nil
	p.epoch++
	p.openWatches, p.peakWatches = 0, 0
}

// Read is one LIST or WATCH request: what it asked for and how it selected.
type Read struct {
	Verb, Path, LabelSelector, FieldSelector string
}

// Reads are the LIST and WATCH requests received since the counts were reset.
func (p *Proxy) Reads() []Read {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reads)
}

// WatchPaths are the WATCH requests received, by path: one key per resource and namespace
// watched, and more than one request for a key when a watch was renewed or opened again.
func (p *Proxy) WatchPaths() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.watchPaths)
}

// PeakWatches is the most watches open at once of those opened since the counts were reset.
func (p *Proxy) PeakWatches() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakWatches
}

// watching counts a watch open until the returned function is called.
func (p *Proxy) watching() func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	epoch := p.epoch
	p.openWatches++
	p.peakWatches = max(p.peakWatches, p.openWatches)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.epoch == epoch {
			p.openWatches--
		}
	}
}

// Counts are the requests received by verb (GET, LIST, WATCH, POST, PUT, PATCH, DELETE).
func (p *Proxy) Counts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// Writes is how many requests asked to change something.
func (p *Proxy) Writes() int64 {
	c := p.Counts()
	return c["POST"] + c["PUT"] + c["PATCH"] + c["DELETE"]
}

// Faults are the faults injected so far, by kind.
func (p *Proxy) Faults() map[Fault]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.faults)
}

// FaultedVerbs are the faulted requests by verb.
func (p *Proxy) FaultedVerbs() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.faultedVerbs)
}

// FaultSummary lists the faults injected, for a log: "500: 12, 503: 9, ...".
func (p *Proxy) FaultSummary() string {
	var parts []string
	var total int64
	for f, n := range p.Faults() {
		parts = append(parts, fmt.Sprintf("%s: %d", f, n))
		total += n
	}
	sort.Strings(parts)
	var verbs []string
	for v, n := range p.FaultedVerbs() {
		verbs = append(verbs, fmt.Sprintf("%s: %d", v, n))
	}
	sort.Strings(verbs)
	return fmt.Sprintf("%d faults in %d requests (%s; by verb: %s)", total, p.Requests(), strings.Join(parts, ", "), strings.Join(verbs, ", "))
}
