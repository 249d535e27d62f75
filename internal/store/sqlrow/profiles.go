package sqlrow

// Profiles and providers (issue 16).

import (
	"encoding/json"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// ProfileCols are the columns ScanProfile reads, in its order.
const ProfileCols = `id, name, color, instructions, model, fallbacks, tools, approval_mode, workspace, is_default, created_at_ms, updated_at_ms, deleted_at_ms`

// ScanProfile reads one row of ProfileCols.
func ScanProfile(s Scanner) (store.Profile, error) {
	var v store.Profile
	var c, u int64
	var d *int64
	var fallbacks, tools string
	err := s.Scan(&v.ID, &v.Name, &v.Color, &v.Instructions, &v.Model, &fallbacks, &tools, &v.ApprovalMode, &v.Workspace, &v.Default, &c, &u, &d)
	if err != nil {
		return v, err
	}
	v.CreatedAt, v.UpdatedAt = fromMS(c), fromMS(u)
	if d != nil {
		v.DeletedAt = fromMS(*d)
	}
	if v.Fallbacks, err = StringList(fallbacks); err != nil {
		return v, fmt.Errorf("profile %q fallbacks: %w", v.ID, err)
	}
	if v.Tools, err = StringList(tools); err != nil {
		return v, fmt.Errorf("profile %q tools: %w", v.ID, err)
	}
	return v, nil
}

// ProviderCols are the columns ScanProvider reads, in its order.
const ProviderCols = `id, name, kind, base_url, api_key_sealed, api_key_hint, default_model, models_json, headers_sealed, header_names, enabled, created_at_ms, updated_at_ms`

// ScanProvider reads one row of ProviderCols.
func ScanProvider(s Scanner) (store.Provider, error) {
	var v store.Provider
	var models, names string
	var c, u int64
	err := s.Scan(&v.ID, &v.Name, &v.Kind, &v.BaseURL, &v.APIKeySealed, &v.APIKeyHint, &v.DefaultModel, &models, &v.HeadersSealed, &names, &v.Enabled, &c, &u)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal([]byte(models), &v.Models); err != nil {
		return v, fmt.Errorf("provider %q models: %w", v.ID, err)
	}
	if err := json.Unmarshal([]byte(names), &v.HeaderNames); err != nil {
		return v, fmt.Errorf("provider %q header names: %w", v.ID, err)
	}
	if len(v.Models) == 0 {
		v.Models = nil // one spelling of "none", as written
	}
	if len(v.HeaderNames) == 0 {
		v.HeaderNames = nil
	}
	v.CreatedAt, v.UpdatedAt = fromMS(c), fromMS(u)
	return v, nil
}
