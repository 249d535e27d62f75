package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// client speaks the JSON API of one server with one credential.
type client struct {
	base  string // without a trailing slash
	token string
	http  *http.Client
}

// apiError is an error answer of the server, in the API's error shape.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("server answered %d %s", e.Status, e.Code)
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

// unreachableError is a request that never got an HTTP answer.
type unreachableError struct {
	base string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the server at %s: %v", e.base, e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

func (c *client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// send performs req and turns a transport failure into an
// unreachableError and a non-2xx answer into an apiError.
func (c *client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, &unreachableError{base: c.base, err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var wire struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(b, &wire)
	return nil, &apiError{Status: resp.StatusCode, Code: wire.Error.Code, Message: wire.Error.Message}
}

// do sends one JSON request and decodes the answer into out (when not nil).
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return &unreachableError{base: c.base, err: err}
		}
		*raw = bytes.TrimSpace(b)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	var ae *apiError
	var ue *unreachableError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUnreachable
	case errors.As(err, &ae):
		switch {
		case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
			return ExitUnreachable
		case ae.Status == http.StatusBadRequest || ae.Status == http.StatusNotFound ||
			ae.Status == http.StatusRequestEntityTooLarge || ae.Status == http.StatusUnsupportedMediaType:
			return ExitUsage
		}
	}
	return ExitFailed
}

// describe is the one line a person reads for err.
func describe(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusUnauthorized:
			return "not authorised: the server refused the credential (set --token or CADUCEUS_TOKEN to the server token or a personal API token)"
		case http.StatusForbidden:
			return "not allowed: " + strings.TrimSpace(ae.Error())
		}
	}
	return err.Error()
}
