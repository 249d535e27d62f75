package httpguard

import (
	"encoding/json"
	"errors"
	"net/http"
)

// Error codes the guard answers with; clients branch on these, not on
// messages.
const (
	CodeForbiddenHost   = "forbidden_host"
	CodeForbiddenOrigin = "forbidden_origin"
	CodeUnauthorized    = "unauthorized"
	CodeBodyTooLarge    = "body_too_large"
)

type errorEnvelope struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// WriteError writes the API's single error shape,
// {"error":{"code":...,"message":...,"details":{...}}}, with the given status.
// It is the one error writer of the server, so every failure looks the same
// to clients whether the guard or a handler produced it.
func WriteError(w http.ResponseWriter, status int, code, message string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	body, err := json.Marshal(errorEnvelope{errorBody{Code: code, Message: message, Details: details}})
	if err != nil {
		// Unencodable details must not cost the client the code and
		// message, nor turn an error path into a panic.
		body, _ = json.Marshal(errorEnvelope{errorBody{Code: code, Message: message, Details: map[string]any{}}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	// A length set for a success body the handler abandoned would be wrong.
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// IsBodyTooLarge reports whether err, typically from decoding a request
// body, came from the guard's body limit, so a handler can answer 413
// body_too_large instead of 400.
func IsBodyTooLarge(err error) bool {
	var tooLarge *http.MaxBytesError
	return errors.As(err, &tooLarge)
}
