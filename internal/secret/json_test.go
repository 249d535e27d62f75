package secret

import "testing"

func TestJSON(t *testing.T) {
	const key = `sk-"quoted"-0123`
	r := NewRedactor("sk-live-0123456789", key)
	for _, c := range []struct {
		name, in, want string
	}{
		{"untouched byte for byte", `{"z":1,"a":"x\ny","n":12345678901234567890}`, `{"z":1,"a":"x\ny","n":12345678901234567890}`},
		{"plain", `{"output":"k=sk-live-0123456789","n":12345678901234567890}`, `{"n":12345678901234567890,"output":"k=[redacted]"}`},
		{"escaped", `{"o":["sk-\"quoted\"-0123"]}`, `{"o":["[redacted]"]}`},
		{"unicode escape", `{"o":"sk-live-\u00301234567890"}`, `{"o":"[redacted]0"}`},
		{"key", `{"sk-live-0123456789":true}`, `{"[redacted]":true}`},
		{"not JSON", `x sk-live-0123456789`, `x [redacted]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(r.JSON([]byte(c.in))); got != c.want {
				t.Errorf("JSON(%s) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}
