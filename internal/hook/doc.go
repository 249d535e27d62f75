// Package hook is Caduceus's traffic with other systems when no one is
// watching (issue 17): outgoing webhooks that post a run's end, and
// inbound triggers whose signed POST queues a run.
//
// Both directions sign the same way: X-Caduceus-Timestamp holds Unix
// seconds and X-Caduceus-Signature "sha256=" and the hex HMAC-SHA256 of
// "<timestamp>.<body>" under the shared secret. The timestamp is inside
// the MAC so a captured request cannot be replayed later with a new one;
// triggers also remember the signatures they accepted within the window.
package hook
