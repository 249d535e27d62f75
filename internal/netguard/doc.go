// Package netguard decides which hosts a tool that reaches the network may
// contact. A text check on a URL misses a public-looking name that
// resolves to 127.0.0.1 or 10.x (DNS rebinding, a hostile redirect), so
// the Guard resolves the name, checks every address, and dials only the
// addresses it checked: there is no second lookup an attacker could answer
// differently.
//
// Private, loopback, link-local, carrier-grade NAT and unspecified
// addresses are refused unless the configuration allows them; a block-list
// refuses hosts or networks whatever they resolve to.
package netguard
