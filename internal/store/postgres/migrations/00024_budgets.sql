-- +goose Up
-- Budgets (issue 16, h16-budgets), as in SQLite's migration 24.
CREATE TABLE budgets (
    scope         TEXT COLLATE "C" NOT NULL,
    target        TEXT COLLATE "C" NOT NULL,
    limits        TEXT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (scope, target)
);
CREATE TABLE budget_days (
    day        TEXT COLLATE "C" PRIMARY KEY,
    tokens     BIGINT NOT NULL DEFAULT 0,
    cost_usd   DOUBLE PRECISION NOT NULL DEFAULT 0,
    tool_calls BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE budget_days;
DROP TABLE budgets;
