package hook

// Filling a trigger's prompt template with the request's JSON body.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// ParseTemplate parses a trigger's prompt template; a key the data lacks
// is an error when it is filled rather than "<no value>" in a prompt.
func ParseTemplate(text string) (*template.Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("the prompt template is empty")
	}
	t, err := template.New("prompt").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	return t, nil
}

// Fill fills text with body, a JSON document (an empty body is null).
func Fill(text string, body []byte) (string, error) {
	t, err := ParseTemplate(text)
	if err != nil {
		return "", err
	}
	var data any
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &data); err != nil {
			return "", fmt.Errorf("the body is not JSON: %w", err)
		}
	}
	var out strings.Builder
	if err := t.Execute(&out, data); err != nil {
		return "", fmt.Errorf("fill the prompt template: %w", err)
	}
	if strings.TrimSpace(out.String()) == "" {
		return "", fmt.Errorf("the filled prompt is empty")
	}
	return out.String(), nil
}
