// Package storetest is the store conformance suite: every behaviour of
// store.Store that callers rely on, written once against the interfaces
// and run against each implementation (internal/store/sqlite,
// internal/store/postgres). A feature that adds to the store contract adds
// its cases here, so both stores keep behaving alike.
//
// It also opens stores of each kind for the tests of the packages above the
// store (SQLite, Postgres, Each), so they run on both.
package storetest

import (
	"testing"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Open opens a fresh, empty database for one test and returns a store on
// it, closed when the test ends, and a function that opens another store
// on the same database, as another process would (closed at the end too).
type Open func(t testing.TB) (st store.Store, another func() store.Store)

// Run runs the suite against the stores open makes, one subtest per
// behaviour, each on a fresh database.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"SessionsCRUD", testSessionsCRUD},
		{"ListSessionsKeysetPagination", testListSessionsKeysetPagination},
		{"ListSessionsTitleQuery", testListSessionsTitleQuery},
		{"ListSessionsBadCursor", testListSessionsBadCursor},
		{"RunRoundTripAndUpdate", testRunRoundTripAndUpdate},
		{"ClaimNext", testClaimNext},
		{"ClaimNextKeepsStartedAt", testClaimNextKeepsStartedAt},
		{"RenewLeases", testRenewLeases},
		{"ResolveRequestFirstWins", testResolveRequestFirstWins},
		{"AppendEventsCallSizes", testAppendEventsCallSizes},
		{"AppendEventsSeqAndIDs", testAppendEventsSeqAndIDs},
		{"AppendEventsAllOrNothing", testAppendEventsAllOrNothing},
		{"AppendEventsFence", testAppendEventsFence},
		{"AppendEach", testAppendEach},
		{"EventsQuery", testEventsQuery},
		{"EventsQueryMaxBytes", testEventsQueryMaxBytes},
		{"EventsQueryFold", testEventsQueryFold},
		{"SessionRunStates", testSessionRunStates},
		{"DeleteSessionRemovesItsData", testDeleteSessionRemovesItsData},
		{"WriteBatchIsolatesFailingBodies", testWriteBatchIsolatesFailingBodies},
		{"WriteBatchChanges", testWriteBatchChanges},
		{"WriteBatchIgnoresBodyCancel", testWriteBatchIgnoresBodyCancel},
		{"TwoHandlesAppendGapFree", testTwoHandlesAppendGapFree},
		{"SessionEventsSeqPerSession", testSessionEventsSeqPerSession},
		{"SessionEventsRefused", testSessionEventsRefused},
		{"SessionEventsReplay", testSessionEventsReplay},
		{"DeleteSessionKeepsTombstone", testDeleteSessionKeepsTombstone},
		{"GitCommittedIsASessionEvent", testGitCommittedIsASessionEvent},
		{"Controls", testControls},
		{"Rules", testRules},
		{"Runners", testRunners},
		{"RunOrder", testRunOrder},
		{"EmptyCursors", testEmptyCursors},
		{"TailersSeeEveryEvent", testTailersSeeEveryEvent},
		{"UsersCRUD", testUsersCRUD},
		{"UserNamesUnique", testUserNamesUnique},
		{"Tokens", testTokens},
		{"WebSessions", testWebSessions},
		{"Checkpoints", testCheckpoints},
		// Issue 15, branch.
		{"SessionLineage", testSessionLineage},
		{"BranchVersionPath", testBranchVersionPath},
		// Goals (issue 15).
		{"Goals", testGoals},
		// Organising sessions.
		{"SessionOrganiseRoundTrip", testSessionOrganiseRoundTrip},
		{"ProjectsCRUD", testProjectsCRUD},
		{"ListSessionsOrganised", testListSessionsOrganised},
		{"ProjectEvents", testProjectEvents},
		// Search (issue 15).
		{"Search", testSearch},
		// Profiles (issue 16, h16-profiles).
		{"ProfilesCRUD", testProfilesCRUD},
		{"ProfilesDefault", testProfilesDefault},
		{"ProfileOfSessionsAndProjects", testProfileOfSessionsAndProjects},
		// Usage and cost (issue 16, h16-usage).
		{"Usage", testUsage},
		{"SearchFilters", testSearchFilters},
		// Providers and settings (issue 16, h16-providers).
		{"ProvidersCRUD", testProvidersCRUD},
		{"Settings", testSettings},
		// Skills per profile (issue 16, h16-skills).
		{"ProfileSkills", testProfileSkills},
		// Approval decisions (issue 16, h16-policy).
		{"ApprovalDecisions", testApprovalDecisions},
		{"RuleOrigin", testRuleOrigin},
		// Memory (issue 16, h16-memory).
		{"Memory", testMemory},
		// Budgets (issue 16, h16-budgets).
		{"Budgets", testBudgets},
		{"BudgetDayUsage", testBudgetDayUsage},
		// Webhooks and triggers (issue 17, h17-hooks).
		{"Webhooks", testWebhooks},
		{"Deliveries", testDeliveries},
		{"Triggers", testTriggers},
		{"RunWebhooks", testRunWebhooks},
		// MCP servers (issue 18, h18-mcpwire).
		{"MCPServers", testMCPServers},
		// Scheduled jobs (issue 17, h17-jobs).
		{"JobsCRUD", testJobsCRUD},
		{"ClaimDueJobs", testClaimDueJobs},
		{"ClaimDueJobsConcurrent", testClaimDueJobsConcurrent},
		// Job delivery and the delivery cursor (issue 17, h17-deliver).
		{"JobDelivery", testJobDelivery},
		{"JobOfRun", testJobOfRun},
		{"DeliveryCursor", testDeliveryCursor},
		{"DeliveryDue", testDeliveryDue},
		// Subagents (issue 18, h18-delegate).
		{"DelegatedSessions", testDelegatedSessions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}
