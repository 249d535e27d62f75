-- +goose Up
-- Budgets (issue 16, h16-budgets): the limits of a run, a session, a
-- profile or the whole server per day (scope 'day', target ''), as a JSON
-- object of budget.Limits; and what the server spent per UTC day, which
-- the day's limits are checked against.
CREATE TABLE budgets (
    scope         TEXT NOT NULL,
    target        TEXT NOT NULL,
    limits        TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (scope, target)
);
CREATE TABLE budget_days (
    day        TEXT PRIMARY KEY,
    tokens     INTEGER NOT NULL DEFAULT 0,
    cost_usd   REAL NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE budget_days;
DROP TABLE budgets;
