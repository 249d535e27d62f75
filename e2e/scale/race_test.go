//go:build race

package scale

// raceEnabled: the race detector slows seeding about tenfold.
const raceEnabled = true
