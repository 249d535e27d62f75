package sqlrow

// Spending limits (issue 16).

import (
	"encoding/json"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// ScanBudget reads one row of scope, target, limits, updated_at_ms.
func ScanBudget(s Scanner) (store.Budget, error) {
	var b store.Budget
	var limits string
	var at int64
	if err := s.Scan(&b.Scope, &b.Target, &limits, &at); err != nil {
		return b, err
	}
	b.UpdatedAt = fromMS(at)
	if err := json.Unmarshal([]byte(limits), &b.Limits); err != nil {
		return b, fmt.Errorf("budget %s/%s: %w", b.Scope, b.Target, err)
	}
	return b, nil
}
