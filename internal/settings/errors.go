package settings

import "fmt"

// Error codes the API answers with.
const (
	CodeInvalidInput      = "invalid_input"
	CodeNotFound          = "provider_not_found"
	CodeNameTaken         = "provider_name_taken"
	CodeReadOnly          = "setting_read_only"
	CodeUnknownSetting    = "unknown_setting"
	CodeInvalidSetting    = "invalid_setting"
	CodeNoSecretKey       = "secret_key_unavailable"
	CodeTestTimeout       = "provider_timeout"
	CodeTestUnreachable   = "provider_unreachable"
	CodeTestAuth          = "provider_auth_failed"
	CodeTestFailed        = "provider_test_failed"
	CodeKeyDoesNotOpen    = "provider_key_unreadable"
	CodeProviderNotTested = "provider_disabled"
)

// Error is a refusal with a stable code; Field names the input at fault.
type Error struct {
	Code  string
	Msg   string
	Field string
}

func (e *Error) Error() string { return e.Msg }

func errorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}
