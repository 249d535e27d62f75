package store

// Outgoing webhooks and inbound triggers (issue 17, h17-hooks).

import "time"

// Webhook kinds.
const (
	WebhookJSON  = "json"  // a signed JSON payload
	WebhookSlack = "slack" // {"text": ...} to a Slack incoming webhook, unsigned
)

// Delivery states.
const (
	DeliveryPending = "pending" // due at NextAt
	DeliverySending = "sending" // claimed by a sender until NextAt
	DeliveryOK      = "ok"      // the receiver answered 2xx
	DeliveryRetried = "retried" // failed; a later attempt follows
	DeliveryFailed  = "failed"  // failed for good (4xx, or the last attempt)
)

// Trigger session policies.
const (
	SessionNew        = "new"        // every call starts a new session
	SessionAccumulate = "accumulate" // every call runs in one session
)

// Webhook is where runs' ends are posted.
type Webhook struct {
	ID, Name, URL string
	Kind          string // WebhookJSON or WebhookSlack
	// SecretSealed is the signing secret sealed with the server's
	// secretbox key (context "webhook:<id>"); "" for Slack.
	SecretSealed string
	// Events are the run statuses posted (completed, failed, expired);
	// none means all three.
	Events []string
	// SessionID and ProfileID narrow the webhook to one session's or one
	// profile's runs; "" is any.
	SessionID, ProfileID string
	Enabled              bool
	CreatedAt, UpdatedAt time.Time
}

// Delivery is one attempt at posting one run's end to one webhook.
type Delivery struct {
	ID        string
	WebhookID string // "" for a run's own webhook_url
	RunID     string
	URL       string // the per-run webhook_url; "" for a configured webhook
	Event     string // the run status posted
	Payload   string // the JSON body, as sent on every attempt
	Attempt   int    // 1-based
	State     string // Delivery*
	// StatusCode is the receiver's answer (0: none, see Error).
	StatusCode int
	Error      string
	Duration   time.Duration
	// NextAt is when a pending attempt is due, or when a sending one's
	// claim runs out.
	NextAt    time.Time
	CreatedAt time.Time
}

// Trigger is an inbound hook: a signed POST /hooks/{id} queues a run whose
// prompt is Template filled with the request's JSON body.
type Trigger struct {
	ID, Name string
	// SecretSealed is the HMAC secret sealed with the server's secretbox
	// key (context "trigger:<id>").
	SecretSealed  string
	Template      string
	ProfileID     string
	Workspace     string
	SessionPolicy string // SessionNew or SessionAccumulate
	// SessionID is the accumulating session, once the first call made it.
	SessionID            string
	Enabled              bool
	CreatedAt, UpdatedAt time.Time
}
